package gen_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"github.com/mlx5gen/mlx5gen/gen/vocab"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/mlx5gen/mlx5gen/gen"
	"github.com/mlx5gen/mlx5gen/gen/cheader"
	"github.com/mlx5gen/mlx5gen/internal/rdmacore"
	specfiles "github.com/mlx5gen/mlx5gen/spec"
)

// The documents whose figures come from the code: every count in them sits
// in a block
//
//	<!-- figures:begin NAME -->
//	...
//	<!-- figures:end -->
//
// that figureBlocks renders.
const (
	updateFigures = "go test ./gen -run TestDocFigures -update"
	updateExample = "go test ./gen -run TestReadmeExample -update"
)

func docFiles(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("..", "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	return append([]string{filepath.Join("..", "README.md")}, files...)
}

// TestDocFigures computes every figure the README and docs/ quote from
// gen.Generate and the reference vectors, and compares each block with the
// document; -update rewrites the blocks.
func TestDocFigures(t *testing.T) {
	blocks := figureBlocks(t)
	used := map[string]bool{}
	for _, path := range docFiles(t) {
		old, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		got, names, err := fillFigures(string(old), blocks)
		if err != nil {
			t.Errorf("%s: %v", path, err)
			continue
		}
		for _, n := range names {
			used[n] = true
		}
		for _, c := range handCounts(got) {
			t.Errorf("%s: %q is a count typed by hand: render it in a figures block (figureBlocks)", path, c)
		}
		if got == string(old) {
			continue
		}
		if *update {
			if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		t.Errorf("%s: figures differ from the code (-doc +code):\n%s\nrun: %s", path, lineDiff(string(old), got), updateFigures)
	}
	for name := range blocks {
		if !used[name] {
			t.Errorf("figures %q appear in no document", name)
		}
	}
}

var (
	blockRE = regexp.MustCompile(`(?s)<!-- figures:begin [a-z0-9-]+ -->\n.*?<!-- figures:end -->\n`)
	countRE = regexp.MustCompile(`(?:^|[^0-9.\w])([0-9][0-9,]* (?:rules|functions|structs|constants|enum types|enums|segments|cases|WQEs|fields|aliases|formats))\b`)
)

// handCounts returns the counts of the code's items that doc states
// outside its figures blocks.
func handCounts(doc string) []string {
	var counts []string
	for _, m := range countRE.FindAllStringSubmatch(blockRE.ReplaceAllString(doc, ""), -1) {
		counts = append(counts, m[1])
	}
	return counts
}

var figureRE = regexp.MustCompile(`(?m)^<!-- figures:(begin|end)(?: ([a-z0-9-]+))? -->\n`)

// fillFigures replaces the body of every figures block of doc with its
// rendering and returns the names it found. An unknown name, a nested or
// unterminated block is an error.
func fillFigures(doc string, blocks map[string]string) (string, []string, error) {
	var b strings.Builder
	var names []string
	last, open := 0, ""
	for _, m := range figureRE.FindAllStringSubmatchIndex(doc, -1) {
		kind, name := doc[m[2]:m[3]], ""
		if m[4] >= 0 {
			name = doc[m[4]:m[5]]
		}
		line := strings.Count(doc[:m[0]], "\n") + 1
		switch {
		case kind == "begin" && open != "":
			return "", nil, fmt.Errorf("line %d: figures %q begins inside %q", line, name, open)
		case kind == "begin":
			body, ok := blocks[name]
			if !ok {
				return "", nil, fmt.Errorf("line %d: no figures named %q", line, name)
			}
			b.WriteString(doc[last:m[1]])
			b.WriteString(body)
			open = name
			names = append(names, name)
		case open == "":
			return "", nil, fmt.Errorf("line %d: figures:end without a begin", line)
		default:
			open = ""
		}
		// The old body, between the markers, is never copied.
		last = m[1]
		if kind == "end" {
			last = m[0]
		}
	}
	if open != "" {
		return "", nil, fmt.Errorf("figures %q has no figures:end", open)
	}
	b.WriteString(doc[last:])
	return b.String(), names, nil
}

// TestFillFigures: a stale body is replaced, a current one kept, and
// malformed blocks are errors.
func TestFillFigures(t *testing.T) {
	blocks := map[string]string{"n": "3 rules\n"}
	doc := "a\n<!-- figures:begin n -->\n2 rules\n<!-- figures:end -->\nb\n"
	got, names, err := fillFigures(doc, blocks)
	want := "a\n<!-- figures:begin n -->\n3 rules\n<!-- figures:end -->\nb\n"
	if err != nil || got != want || len(names) != 1 {
		t.Errorf("got %q %v %v, want %q", got, names, err, want)
	}
	if again, _, _ := fillFigures(got, blocks); again != got {
		t.Errorf("a current block changed: %q", again)
	}
	if c := handCounts(got + "It has 12 rules, and the 55.0 rules of a flag.\n"); len(c) != 1 || c[0] != "12 rules" {
		t.Errorf("handCounts: %q, want the count outside the block only", c)
	}
	for _, bad := range []string{
		"<!-- figures:begin x -->\n<!-- figures:end -->\n",
		"<!-- figures:begin n -->\n",
		"<!-- figures:end -->\n",
		"<!-- figures:begin n -->\n<!-- figures:begin n -->\n<!-- figures:end -->\n",
	} {
		if _, _, err := fillFigures(bad, blocks); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

// figureBlocks renders every figures block.
func figureBlocks(t *testing.T) map[string]string {
	res := map[string]*gen.Result{}
	for _, v := range rdmacore.Versions {
		res[v] = generate(t, v)
	}
	c := res[committed]
	p := c.Package
	arg, chain, recv := 0, 0, 0
	for _, r := range p.API.Rules {
		switch {
		case r.Arg != nil:
			arg++
		case r.Chain != 0 && slices.Contains(vocab.ReceiveChecks, vocab.ChainChecks[r.Chain-1]):
			recv++
		case r.Chain != 0:
			chain++
		}
	}
	blocks := map[string]string{}
	blocks["api"] = fmt.Sprintf("From the rdma-core %s header and `spec/`, the committed `generated/mlx5dv` has\n"+
		"%d constants, %d enum types, %d WQE and CQE segment types and %d WQE formats. The\n"+
		"descriptors in `spec/api` describe %d functions and %d structs with %d rules: %d\n"+
		"checked by the generated validators, %d by `runtime/internal/wrcheck`, %d by `runtime/rq`, and %d\n"+
		"that describe behaviour or later use that cannot be checked when posting.\n",
		committed, len(p.Consts), len(p.Enums), len(p.Segments), len(p.Formats),
		len(p.API.Funcs), len(p.API.Mirrors), len(p.API.Rules), arg, chain, recv, len(p.API.Rules)-arg-chain-recv)

	var rel strings.Builder
	rel.WriteString("| rdma-core | constants | enum types | segments | functions | structs | rules | enforced |\n")
	rel.WriteString("| --- | --- | --- | --- | --- | --- | --- | --- |\n")
	var gcc strings.Builder
	gcc.WriteString("| rdma-core | structs and unions | enums | fields | constants |\n| --- | --- | --- | --- | --- |\n")
	for _, v := range rdmacore.Versions {
		p := res[v].Package
		enforced := 0
		for _, r := range p.API.Rules {
			if r.Arg != nil || r.Chain != 0 {
				enforced++
			}
		}
		fmt.Fprintf(&rel, "| %s | %d | %d | %d | %d | %d | %d | %d |\n", v, len(p.Consts), len(p.Enums), len(p.Segments),
			len(p.API.Funcs), len(p.API.Mirrors), len(p.API.Rules), enforced)
		r, e, f, k := gccItems(res[v].C)
		fmt.Fprintf(&gcc, "| %s | %d | %d | %d | %d |\n", v, r, e, f, k)
	}
	blocks["releases"] = rel.String()
	blocks["gcc"] = gcc.String()

	header, fields, private := 0, 0, 0
	for _, s := range p.Segments {
		if s.Private != "" {
			private++
			continue
		}
		header++
		fields += len(s.Fields)
	}
	blocks["segments"] = fmt.Sprintf("`TestSegmentLayoutMatchesC` checks the %d segments the header declares, %d fields in\n"+
		"all, through cgo; the %d segments the header does not declare are checked by the vectors.\n", header, fields, private)

	files, cases, rejects, wqes := vectorCounts(t)
	blocks["vectors"] = fmt.Sprintf("The reference vectors hold %d cases in %d files (%d of them rejected batches, in\n"+
		"`rejects.json`), with %d WQEs.\n", cases, files, rejects, wqes)

	var al strings.Builder
	for _, v := range rdmacore.Versions {
		root, err := rdmacore.IncludeRoot(".", v)
		if err != nil {
			t.Fatal(err)
		}
		r, err := gen.Generate(gen.Config{IncludeRoot: root, Spec: specfiles.FS, Alias: "github.com/mlx5gen/mlx5gen/generated/mlx5dv"})
		if err != nil {
			t.Fatal(err)
		}
		local := make([]string, 0, len(r.Alias.Local))
		for n := range r.Alias.Local {
			local = append(local, n)
		}
		sort.Strings(local)
		for i, n := range local {
			local[i] = "`" + n + "`"
		}
		list := strings.Join(local, ", ")
		if list == "" {
			list = "none"
		}
		fmt.Fprintf(&al, "- from %s: %d aliases; declared in the package: %s\n", v, len(r.Alias.Aliased), list)
	}
	blocks["alias"] = al.String()
	return blocks
}

// gccItems counts what TestLayoutMatchesGCC (gen/cheader) compares with
// gcc: named, complete top-level records with their members, named enums
// and every integer constant.
func gccItems(m *cheader.Model) (records, enums, fields, consts int) {
	for _, r := range append(append([]*cheader.Record(nil), m.Records...), m.External...) {
		if r.Incomplete || r.Parent != nil || r.Tag == "" && r.Typedef == "" {
			continue
		}
		records++
		fields += len(r.Members())
	}
	for _, e := range append(append([]*cheader.Enum(nil), m.Enums...), m.ExternEnums...) {
		if e.Tag != "" || e.Typedef != "" {
			enums++
		}
	}
	return records, enums, fields, len(m.Constants())
}

// vectorCounts counts the reference vectors' files, cases, rejected cases
// and WQEs.
func vectorCounts(t *testing.T) (files, cases, rejects, wqes int) {
	paths, err := filepath.Glob(filepath.Join("..", "testdata", "vectors", "*.json"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no vectors: %v", err)
	}
	for _, path := range paths {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		var f struct {
			Cases []struct {
				Result struct {
					Batches []struct {
						WQEs []json.RawMessage `json:"wqes"`
					} `json:"batches"`
				} `json:"result"`
			} `json:"cases"`
		}
		if err := json.Unmarshal(data, &f); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		files++
		cases += len(f.Cases)
		if filepath.Base(path) == "rejects.json" {
			rejects += len(f.Cases)
		}
		for _, c := range f.Cases {
			for _, b := range c.Result.Batches {
				wqes += len(b.WQEs)
			}
		}
	}
	return files, cases, rejects, wqes
}

// TestReadmeExample: the code the README quotes after
// <!-- example: PATH --> is PATH's content, so the quoted example is the
// one go test compiles and runs.
func TestReadmeExample(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join("..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	re := regexp.MustCompile("(?s)<!-- example: ([^ ]+) -->\n```go\n(.*?)```\n")
	ms := re.FindAllSubmatch(readme, -1)
	if len(ms) == 0 {
		t.Fatal("README.md quotes no example (<!-- example: PATH --> then a go code block)")
	}
	for _, m := range ms {
		path := string(m[1])
		src, err := os.ReadFile(filepath.Join("..", filepath.FromSlash(path)))
		if err != nil {
			t.Errorf("README.md quotes %s: %v", path, err)
			continue
		}
		if !bytes.Equal(m[2], src) && !*update {
			t.Errorf("README.md's quote of %s differs from the file (-README +file):\n%s\nrun: %s", path, lineDiff(string(m[2]), string(src)), updateExample)
		}
	}
	if *update {
		out := re.ReplaceAllFunc(readme, func(m []byte) []byte {
			sub := re.FindSubmatch(m)
			src, err := os.ReadFile(filepath.Join("..", filepath.FromSlash(string(sub[1]))))
			if err != nil {
				return m
			}
			return []byte("<!-- example: " + string(sub[1]) + " -->\n```go\n" + string(src) + "```\n")
		})
		if err := os.WriteFile(filepath.Join("..", "README.md"), out, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
