package main

import (
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/mlx5gen/mlx5gen/gen"
	"github.com/mlx5gen/mlx5gen/gen/model"
)

// namePair is one line of mlx5gen names: a C type or member and its Go
// name in the generated package.
type namePair struct{ c, goName string }

func namesCmd(args []string, _ io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("names", flag.ContinueOnError)
	fs.SetOutput(stderr)
	in := inputFlags(fs)
	fs.Usage = func() {
		fmt.Fprint(stderr, "usage: mlx5gen names [flags] [C name...]\n\n"+
			"Prints the Go name of every C type and member the generated package declares,\n"+
			"one \"C name → Go name\" per line; with arguments (a tag such as mlx5_wqe_ctrl_seg,\n"+
			"tag.member, or a function), only those. Constants keep their C names.\n\n")
		fs.PrintDefaults()
	}
	if st, ok := parseFlags(fs, args, stderr); !ok {
		return st
	}
	cfg, err := in.config("")
	if err != nil {
		return configFail(fs, stderr, err)
	}
	res, err := gen.Load(cfg)
	if err != nil {
		return failLines(stderr, err)
	}
	pairs := namePairs(res.Package)
	if fs.NArg() == 0 {
		for _, p := range pairs {
			fmt.Fprintf(stdout, "%s → %s\n", p.c, p.goName)
		}
		return 0
	}
	status := 0
	for _, a := range fs.Args() {
		found := false
		for _, p := range pairs {
			if p.c == a || bareTag(p.c) == a || p.c == a+"()" {
				fmt.Fprintf(stdout, "%s → %s\n", p.c, p.goName)
				found = true
			}
		}
		if !found {
			status = failf(stderr, "names: the package generated from %s declares no type or member %s", res.C.Header, a)
		}
	}
	return status
}

// bareTag drops the "struct " or "enum " of a C type.
func bareTag(c string) string {
	for _, k := range []string{"struct ", "union ", "enum "} {
		if t, ok := strings.CutPrefix(c, k); ok {
			return t
		}
	}
	return c
}

// namePairs lists the Go names of the package's C types and members, in
// the package's order: enums, segments with their fields and parts,
// mirrors with their fields, then the functions (their Func constant, and
// their validator when they have argument rules).
func namePairs(p *model.Package) []namePair {
	var out []namePair
	for _, e := range p.Enums {
		out = append(out, namePair{e.CName, e.GoName})
	}
	for _, sg := range p.Segments {
		kind := "struct "
		if sg.Union {
			kind = "union "
		}
		out = append(out, namePair{kind + sg.CName, sg.GoName})
		for _, f := range sg.Fields {
			out = append(out, namePair{sg.CName + "." + f.CName, sg.GoName + "." + f.GoName})
			for _, pt := range f.Parts {
				out = append(out, namePair{sg.CName + "." + f.CName + "[" + pt.Name + "]", sg.GoName + "." + pt.GoName})
			}
		}
	}
	for _, m := range p.API.Mirrors {
		out = append(out, namePair{"struct " + m.CName, m.GoName})
		for _, f := range m.Fields {
			if f.CName != "" {
				out = append(out, namePair{m.CName + "." + f.CName, m.GoName + "." + f.GoName})
			}
			for _, u := range f.Members { // an anonymous union's members have accessors
				out = append(out, namePair{m.CName + "." + u.CName, m.GoName + "." + u.GoName + "()"})
			}
		}
	}
	for _, fn := range p.API.Funcs {
		g := fn.GoName
		if len(fn.Rules) > 0 {
			g += ", " + fn.Validator()
		}
		out = append(out, namePair{fn.Name + "()", g})
	}
	return out
}
