package main

import (
	"bytes"
	"fmt"
	"io"
	"path/filepath"
	"strconv"

	"github.com/mlx5gen/mlx5gen/gen"
	"github.com/mlx5gen/mlx5gen/gen/alias"
	"github.com/mlx5gen/mlx5gen/gen/outcache"
)

// produce returns what generate writes and prints: from the output cache
// when the model, the spec and the options are those of a run it holds,
// else by running the generator (and storing what it made). log, when not
// nil (-v), is told how the lookup and the store went.
func produce(cfg gen.Config, verbose bool, log io.Writer) (*outcache.Entry, error) {
	c := outputCache(cfg, log)
	if c != nil {
		key, why := outputKey(c, cfg, verbose)
		if key != "" {
			e, w := c.Lookup(key)
			if e != nil {
				c.Log("output cache: hit %s", c.Path(key))
				return e, nil
			}
			why = w
		}
		c.Log("output cache: miss (%s)", why)
	}
	res, err := gen.Generate(cfg)
	if err != nil {
		return nil, err
	}
	e := summarize(cfg, res, verbose)
	if c != nil {
		// The model cache has stored the model by now, if it could.
		if key, why := outputKey(c, cfg, verbose); key != "" {
			c.Store(key, e)
		} else {
			c.Log("output cache: not stored (%s)", why)
		}
	}
	return e, nil
}

// outputCache is the output cache, in the model cache's directory; nil
// when the model cache is off (the output is keyed by the model's entry).
func outputCache(cfg gen.Config, log io.Writer) *outcache.Cache {
	if cfg.ModelCache == nil {
		return nil
	}
	c := &outcache.Cache{Dir: cfg.ModelCache.Dir, Log: func(string, ...any) {}}
	if log != nil {
		c.Log = func(format string, args ...any) { fmt.Fprintf(log, "mlx5gen: "+format+"\n", args...) }
	}
	return c
}

// outputKey is the key of the run's output, or "" and why there is none.
func outputKey(c *outcache.Cache, cfg gen.Config, verbose bool) (string, string) {
	model, why := cfg.ModelCache.Current(cfg.IncludeRoot, cfg.Header)
	if model == "" {
		return "", why
	}
	dir := cfg.SpecDir
	if dir == "" {
		dir = "."
	}
	key, err := outcache.Key(model, cfg.Spec, dir,
		"I="+cfg.IncludeRoot, "header="+cfg.Header, "spec="+cfg.SpecName, "specdir="+dir,
		"pkg="+cfg.Package, "release="+cfg.Version, "release-source="+cfg.VersionSource,
		"alias="+cfg.Alias, "tables="+cfg.Tables, "import="+cfg.Import, "bindings="+cfg.Bindings, "prm="+cfg.PRM,
		"v="+strconv.FormatBool(verbose))
	if err != nil {
		return "", "spec: " + err.Error()
	}
	return key, ""
}

// summarize is the entry of a run: its files and what generate prints
// before writing them.
func summarize(cfg gen.Config, res *gen.Result, verbose bool) *outcache.Entry {
	var stdout, stderr bytes.Buffer
	p := res.Package
	warn(&stderr, p)
	fmt.Fprintf(&stdout, "read %s (%s) and %d spec files\n", filepath.Join(cfg.IncludeRoot, res.C.Header), release(res.C), len(res.Spec.Files))
	fmt.Fprintf(&stdout, "  %d constants, %d enum types, %d segments, %d WQE formats\n", len(p.Consts), len(p.Enums), len(p.Segments), len(p.Formats))
	fmt.Fprintf(&stdout, "  %d functions, %d structs, %d rules described\n", len(p.API.Funcs), len(p.API.Mirrors), len(p.API.Rules))
	printUncovered(&stderr, p.API.Uncovered)
	if d := res.Alias; d != nil {
		fmt.Fprintf(&stdout, "  %d types are aliases of %s; %d are declared here (listed in %s)\n", len(d.Aliased), cfg.Alias, len(d.Local), alias.SummaryName)
	}
	return &outcache.Entry{Files: res.Files, Tables: res.Tables, Bindings: res.BindingFiles, PRM: res.PRMFiles,
		Rules: res.Rules, Stdout: stdout.Bytes(), Stderr: stderr.Bytes()}
}
