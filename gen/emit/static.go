package emit

import (
	_ "embed"
	"go/format"
	"strings"

	"github.com/mlx5gen/mlx5gen/gen/model"
)

// The files whose code takes no model input are Go text, which reads
// better than jennifer calls: only the header, the build constraint and
// the package clause are added.
var (
	//go:embed format.go.txt
	formatSource string
	//go:embed byteorder_le.go.txt
	byteOrderLESource string
	//go:embed byteorder_be.go.txt
	byteOrderBESource string
	//go:embed layout_other.go.txt
	layoutOtherSource string
	//go:embed ruleerror.go.txt
	ruleErrorSource string
)

// littleEndianArchs are the GOARCH values whose byte order is little-endian.
const littleEndianArchs = "386 || amd64 || arm || arm64 || loong64 || mips64le || mipsle || ppc64le || riscv64 || wasm"

// lp64 names the 64-bit targets whose C layout the mirrors reproduce
// (pointers and longs of 8 bytes, as on x86-64). Elsewhere the mirrors
// build, so that pure-Go code does, but MirrorLayout reports that they do
// not match C.
const lp64 = "amd64 || arm64 || riscv64 || ppc64le || ppc64 || s390x || loong64 || mips64 || mips64le"

// statics are the static files by name: their text and build constraint.
var statics = map[string]struct{ src, build string }{
	// flagName, formatFlags, formatUnknown, appendHex, BE16..64: what the
	// String methods share.
	"format.go": {formatSource, ""},
	// ToBEn and BEn.Value: a byte swap on little-endian hosts, nothing on
	// big-endian ones.
	"byteorder_le.go": {byteOrderLESource, littleEndianArchs},
	"byteorder_be.go": {byteOrderBESource, "!(" + littleEndianArchs + ")"},
	// MirrorLayout where the mirrors do not have C's layout.
	"layout_other.go": {layoutOtherSource, "!(" + lp64 + ")"},
	// The rule error and its formatting.
	"ruleerror.go": {ruleErrorSource, ""},
}

// static renders a file whose code does not depend on the model.
func static(p *model.Package, name string) (File, error) {
	st := statics[name]
	var b strings.Builder
	for _, l := range strings.Split(header(p), "\n") {
		b.WriteString(strings.TrimRight("// "+l, " ") + "\n")
	}
	if st.build != "" {
		b.WriteString("//go:build " + st.build + "\n")
	}
	b.WriteString("\npackage " + p.Name + "\n\n" + st.src)
	src, err := format.Source([]byte(b.String()))
	if err != nil {
		return File{}, numbered(name, err)
	}
	return File{Name: name, Content: src}, nil
}
