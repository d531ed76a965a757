package emit

import (
	"fmt"
	"strings"

	"github.com/dave/jennifer/jen"

	"github.com/mlx5gen/mlx5gen/gen/model"
)

func id(s string) *jen.Statement { return jen.Id(s) }

// splitFile writes Split, which cuts a WQE into its segments using the
// spec's WQE formats, and the view types it returns.
func splitFile(p *model.Package, f *jen.File) {
	sp := p.Split
	stringer := jen.Qual("fmt", "Stringer")

	comment(f, "WQESegment is one segment of a WQE, as Split finds it.")
	f.Type().Id("WQESegment").Struct(
		id("Offset").Int().Comment("byte offset in the WQE"),
		id("Name").String().Comment(`C name of the segment, or "inline data", "padding", "unparsed"`),
		id("Raw").Index().Byte().Comment("the segment's bytes, aliasing the WQE"),
		id("View").Add(stringer).Comment("typed view: *"+sp.Ctrl.GoName+", ..., InlineData or RawBytes"),
	)
	f.Line()
	comment(f, "SplitOptions says what a WQE's bytes alone do not tell.")
	f.Type().Id("SplitOptions").Struct(
		id("DCI").Bool().Comment("posted on a DC initiator: an address vector follows the control segment"),
	)
	f.Line()
	comment(f, "InlineData is an inline data segment: its 4-byte header and the payload.")
	f.Type().Id("InlineData").Index().Byte()
	f.Line()
	comment(f, "Header returns the inline segment's header.")
	f.Func().Params(id("d").Id("InlineData")).Id("Header").Params().Op("*").Id(sp.Inline.GoName).Block(
		jen.Return(jen.Parens(jen.Op("*").Id(sp.Inline.GoName)).Call(id("d").Index(jen.Op(":").Id(sp.Inline.SizeName())))))
	f.Line()
	comment(f, "Payload returns the inline data.")
	f.Func().Params(id("d").Id("InlineData")).Id("Payload").Params().Index().Byte().Block(
		jen.Return(id("d").Index(id(sp.Inline.SizeName()).Op(":"))))
	f.Line()
	comment(f, "String prints the header and the payload in hex.")
	f.Func().Params(id("d").Id("InlineData")).Id("String").Params().String().Block(
		jen.Return(jen.Lit("inline{").Op("+").Id("d").Dot("Header").Call().Dot("String").Call().Op("+").Lit(", data: ").Op("+").
			Qual("encoding/hex", "EncodeToString").Call(id("d").Dot("Payload").Call()).Op("+").Lit("}")))
	f.Line()
	comment(f, "RawBytes is bytes Split does not interpret: padding, or the body of a WQE\nwhose opcode has no format.")
	f.Type().Id("RawBytes").Index().Byte()
	f.Line()
	comment(f, "String prints the bytes in hex.")
	f.Func().Params(id("r").Id("RawBytes")).Id("String").Params().String().Block(
		jen.Return(jen.Lit("bytes{").Op("+").Qual("encoding/hex", "EncodeToString").Call(id("r")).Op("+").Lit("}")))
	f.Line()

	// SegmentView: name -> typed view.
	var cases []jen.Code
	for _, sg := range p.Segments {
		cases = append(cases, jen.Case(jen.Lit(sg.CName)).Block(
			jen.If(jen.Len(id("b")).Op("<").Id(sg.SizeName())).Block(jen.Return(jen.Nil(), jen.False())),
			jen.Return(jen.Parens(jen.Op("*").Id(sg.GoName)).Call(id("b").Index(jen.Op(":").Id(sg.SizeName()))), jen.True())))
	}
	comment(f, "SegmentView returns the typed view of the segment named cname (a C struct\nname such as mlx5_wqe_ctrl_seg) over the start of b, and false if there is no\nsuch segment or b is too short.")
	f.Func().Id("SegmentView").Params(id("cname").String(), id("b").Index().Byte()).Params(stringer, jen.Bool()).Block(
		jen.Switch(id("cname")).Block(cases...),
		jen.Return(jen.Nil(), jen.False()))
	f.Line()
	comment(f, "segmentSize returns the size of the segment named cname.")
	var sizeCases []jen.Code
	for _, sg := range p.Segments {
		sizeCases = append(sizeCases, jen.Case(jen.Lit(sg.CName)).Block(jen.Return(id(sg.SizeName()))))
	}
	f.Func().Id("segmentSize").Params(id("cname").String()).Int().Block(
		jen.Switch(id("cname")).Block(sizeCases...),
		jen.Return(jen.Lit(0)))
	f.Line()

	fieldTable(p, f)
	splitter(p, f)
	splitFunc(p, f)
}

// flatFields lists a segment's fields with nested segments expanded, their
// names as C member paths.
func flatFields(sg *model.Segment, prefix string, base int, out []jen.Code) []jen.Code {
	for _, fl := range sg.Fields {
		if fl.Kind == model.NestedField {
			out = flatFields(fl.Nested, prefix+fl.CName+".", base+fl.Offset, out)
			continue
		}
		// Keyed, so that vet is clean where SegmentField is another
		// package's (a package generated with -alias).
		out = append(out, jen.Values(jen.Id("Name").Op(":").Lit(prefix+fl.CName),
			jen.Id("Offset").Op(":").Lit(base+fl.Offset), jen.Id("Size").Op(":").Lit(fl.Size())))
	}
	return out
}

// fieldTable writes SegmentField and FieldAt, which name the field of a
// segment at a byte offset (for reports of differing bytes).
func fieldTable(p *model.Package, f *jen.File) {
	comment(f, "SegmentField is a field of a segment: its C member path, offset and size.")
	f.Type().Id("SegmentField").Struct(
		id("Name").String().Comment("C member path"),
		id("Offset").Int().Comment("byte offset in its segment"),
		id("Size").Int().Comment("size in bytes"),
	)
	f.Line()
	f.Var().Id("segmentFields").Op("=").Map(jen.String()).Index().Id("SegmentField").Values(jen.DictFunc(func(d jen.Dict) {
		for _, sg := range p.Segments {
			if sg.Union {
				continue
			}
			d[jen.Lit(sg.CName)] = jen.Values(flatFields(sg, "", 0, nil)...)
		}
	}))
	f.Line()
	comment(f, "FieldAt returns the field of the segment named cname that holds byte off,\nand false if the segment is unknown or no field covers the byte.")
	f.Func().Id("FieldAt").Params(id("cname").String(), id("off").Int()).Params(id("SegmentField"), jen.Bool()).Block(
		jen.For(jen.List(jen.Id("_"), id("fl")).Op(":=").Range().Id("segmentFields").Index(id("cname"))).Block(
			jen.If(id("off").Op(">=").Id("fl").Dot("Offset").Op("&&").Id("off").Op("<").Id("fl").Dot("Offset").Op("+").Id("fl").Dot("Size")).Block(
				jen.Return(id("fl"), jen.True()))),
		jen.Return(jen.Id("SegmentField").Values(), jen.False()))
}

// splitter writes the cursor Split walks a WQE with; its umr method only
// when a format has the body of a UMR (umr*), whose segments the model
// then checked.
func splitter(p *model.Package, f *jen.File) {
	sp := p.Split
	s := func() *jen.Statement { return id("s") }
	comment(f, "splitter walks a WQE, appending the segments it finds.")
	f.Type().Id("splitter").Struct(
		id("wqe").Index().Byte(),
		id("off").Int(),
		id("segs").Index().Id("WQESegment"),
	)
	f.Line()
	f.Func().Params(s().Op("*").Id("splitter")).Id("add").Params(id("name").String(), id("n").Int(), id("view").Qual("fmt", "Stringer")).Block(
		s().Dot("segs").Op("=").Append(s().Dot("segs"), jen.Id("WQESegment").Values(jen.Dict{
			id("Offset"): s().Dot("off"), id("Name"): id("name"),
			id("Raw"): s().Dot("wqe").Index(s().Dot("off"), s().Dot("off").Op("+").Id("n")), id("View"): id("view"),
		})),
		s().Dot("off").Op("+=").Id("n"),
	)
	f.Line()
	comment(f, "fixed adds one segment of a known type.")
	f.Func().Params(s().Op("*").Id("splitter")).Id("fixed").Params(id("cname").String()).Error().Block(
		id("n").Op(":=").Id("segmentSize").Call(id("cname")),
		jen.If(s().Dot("off").Op("+").Id("n").Op(">").Len(s().Dot("wqe"))).Block(
			jen.Return(jen.Qual("fmt", "Errorf").Call(jen.Lit("mlx5dv: split: %s (%d bytes) at byte %d runs past the %d bytes ds gives"),
				id("cname"), id("n"), s().Dot("off"), jen.Len(s().Dot("wqe"))))),
		jen.List(id("v"), id("_")).Op(":=").Id("SegmentView").Call(id("cname"), s().Dot("wqe").Index(s().Dot("off").Op(":"))),
		s().Dot("add").Call(id("cname"), id("n"), id("v")),
		jen.Return(jen.Nil()),
	)
	f.Line()
	comment(f, "rest adds what is left as raw bytes.")
	f.Func().Params(s().Op("*").Id("splitter")).Id("rest").Params(id("name").String(), id("end").Int()).Block(
		jen.If(s().Dot("off").Op("<").Id("end")).Block(
			s().Dot("add").Call(id("name"), id("end").Op("-").Id("s").Dot("off"), id("RawBytes").Call(s().Dot("wqe").Index(s().Dot("off"), id("end"))))),
	)
	f.Line()
	comment(f, "data adds data segments, or inline data, up to the end of the WQE.")
	f.Func().Params(s().Op("*").Id("splitter")).Id("data").Params().Error().Block(
		jen.For(s().Dot("off").Op("<").Len(s().Dot("wqe"))).Block(
			jen.If(jen.Len(s().Dot("wqe")).Op("-").Id("s").Dot("off").Op("<").Lit(4)).Block(
				jen.Return(jen.Qual("fmt", "Errorf").Call(jen.Lit("mlx5dv: split: %d stray bytes at byte %d"), jen.Len(s().Dot("wqe")).Op("-").Id("s").Dot("off"), s().Dot("off")))),
			id("bc").Op(":=").Qual(binaryPkg, "BigEndian").Dot("Uint32").Call(s().Dot("wqe").Index(s().Dot("off").Op(":"))),
			jen.If(id("bc").Op("&").Id("MLX5_INLINE_SEG").Op("==").Lit(0)).Block(
				jen.If(id("err").Op(":=").Id("s").Dot("fixed").Call(jen.Lit("mlx5_wqe_data_seg")), id("err").Op("!=").Nil()).Block(jen.Return(id("err"))),
				jen.Continue(),
			),
			id("n").Op(":=").Id(sp.Inline.SizeName()).Op("+").Int().Call(id("bc").Op("&^").Id("MLX5_INLINE_SEG")),
			jen.If(s().Dot("off").Op("+").Id("n").Op(">").Len(s().Dot("wqe"))).Block(
				jen.Return(jen.Qual("fmt", "Errorf").Call(jen.Lit("mlx5dv: split: inline data of %d bytes at byte %d runs past the %d bytes ds gives"),
					id("n").Op("-").Id(sp.Inline.SizeName()), s().Dot("off"), jen.Len(s().Dot("wqe"))))),
			s().Dot("add").Call(jen.Lit("inline data"), id("n"), id("InlineData").Call(s().Dot("wqe").Index(s().Dot("off"), s().Dot("off").Op("+").Id("n")))),
			id("pad").Op(":=").Parens(id("s").Dot("off").Op("+").Lit(15)).Op("&^").Lit(15),
			s().Dot("rest").Call(jen.Lit("padding"), jen.Min(id("pad"), jen.Len(s().Dot("wqe")))),
		),
		jen.Return(jen.Nil()),
	)
	f.Line()
	if p.Split.UMRCtrl != nil {
		umrMethod(f, p.Split)
	}
}

// umrMethod writes the splitter's umr method.
func umrMethod(f *jen.File, sp model.Splitter) {
	s := func() *jen.Statement { return id("s") }
	comment(f, "umr adds the body of a UMR WQE after its control segment u: the mkey\ncontext, the translation (KLMs, or a repeat block and its entries) and the BSFs.")
	f.Func().Params(s().Op("*").Id("splitter")).Id("umr").Params(id("u").Op("*").Id(sp.UMRCtrl.GoName)).Error().Block(
		jen.If(s().Dot("off").Op("==").Len(s().Dot("wqe"))).Block(jen.Return(jen.Nil())),
		jen.If(id("err").Op(":=").Id("s").Dot("fixed").Call(jen.Lit("mlx5_wqe_mkey_context_seg")), id("err").Op("!=").Nil()).Block(jen.Return(id("err"))),
		id("end").Op(":=").Id("s").Dot("off").Op("+").Lit(16).Op("*").Int().Call(id("u").Dot(sp.UMRCtrl.Accessor("klm_octowords")).Call()),
		jen.If(id("end").Op(">").Len(s().Dot("wqe"))).Block(
			jen.Return(jen.Qual("fmt", "Errorf").Call(jen.Lit("mlx5dv: split: %d KLM octowords at byte %d run past the %d bytes ds gives"),
				id("u").Dot(sp.UMRCtrl.Accessor("klm_octowords")).Call(), s().Dot("off"), jen.Len(s().Dot("wqe"))))),
		jen.If(id("end").Op("-").Id("s").Dot("off").Op(">=").Lit(16).Op("&&").Qual(binaryPkg, "BigEndian").Dot("Uint32").Call(s().Dot("wqe").Index(s().Dot("off").Op("+").Lit(4).Op(":"))).Op("==").Lit(model.RepeatBlockOp)).Block(
			jen.If(id("err").Op(":=").Id("s").Dot("fixed").Call(jen.Lit("mlx5_wqe_umr_repeat_block_seg")), id("err").Op("!=").Nil()).Block(jen.Return(id("err"))),
			id("rb").Op(":=").Id("s").Dot("segs").Index(jen.Len(s().Dot("segs")).Op("-").Lit(1)).Dot("View").Assert(jen.Op("*").Id(sp.RepeatBlock.GoName)),
			jen.For(id("i").Op(":=").Lit(0).Op(";").Id("i").Op("<").Int().Call(id("rb").Dot(sp.RepeatBlock.Accessor("num_ent")).Call()).Op("&&").Id("s").Dot("off").Op("<").Id("end").Op(";").Id("i").Op("++")).Block(
				jen.If(id("err").Op(":=").Id("s").Dot("fixed").Call(jen.Lit("mlx5_wqe_umr_repeat_ent_seg")), id("err").Op("!=").Nil()).Block(jen.Return(id("err")))),
		).Else().Block(
			jen.For(s().Dot("off").Op("+").Id(sp.KLM.SizeName()).Op("<=").Id("end")).Block(
				jen.If(id("err").Op(":=").Id("s").Dot("fixed").Call(jen.Lit("mlx5_wqe_umr_klm_seg")), id("err").Op("!=").Nil()).Block(jen.Return(id("err")))),
		),
		s().Dot("rest").Call(jen.Lit("padding"), id("end")),
		jen.If(id("u").Dot(sp.UMRCtrl.Accessor("flags")).Call().Op("&").Id("MLX5_WQE_UMR_CTRL_FLAG_TRNSLATION_OFFSET").Op("!=").Lit(0)).Block(
			jen.Return(jen.Nil()).Comment("the union holds translation_offset, not bsf_octowords")),
		id("bsf").Op(":=").Lit(16).Op("*").Int().Call(id("u").Dot(sp.UMRCtrl.Accessor("bsf_octowords")).Call()),
		jen.If(id("bsf").Op("%").Lit(64).Op("!=").Lit(0)).Block(
			jen.Return(jen.Qual("fmt", "Errorf").Call(jen.Lit("mlx5dv: split: %d BSF octowords is not a whole number of 64-byte BSFs"), id("u").Dot(sp.UMRCtrl.Accessor("bsf_octowords")).Call()))),
		jen.For(id("i").Op(":=").Lit(0).Op(";").Id("i").Op("<").Id("bsf").Op(";").Id("i").Op("+=").Lit(64)).Block(
			id("name").Op(":=").Lit("mlx5_bsf"),
			jen.If(s().Dot("off").Op("<").Len(s().Dot("wqe")).Op("&&").Id("s").Dot("wqe").Index(s().Dot("off")).Op("&").Lit(0x3f).Op("==").Lit(1)).Block(
				id("name").Op("=").Lit("mlx5_crypto_bsf").Comment("BSF type 1")),
			jen.If(id("err").Op(":=").Id("s").Dot("fixed").Call(id("name")), id("err").Op("!=").Nil()).Block(jen.Return(id("err"))),
		),
		jen.Return(jen.Nil()),
	)
	f.Line()
}

func splitFunc(p *model.Package, f *jen.File) {
	sp := p.Split
	var cases []jen.Code
	for _, w := range p.Formats {
		var ops []jen.Code
		for _, o := range w.Opcodes {
			ops = append(ops, id(o.Name))
		}
		var steps []jen.Code
		for _, st := range w.Steps {
			var call jen.Code
			switch st.Kind {
			case model.StepSegment:
				call = id("s").Dot("fixed").Call(jen.Lit(st.Segment.CName))
			case model.StepData:
				call = id("s").Dot("data").Call()
			case model.StepUMR:
				call = id("s").Dot("umr").Call(id("s").Dot("segs").Index(jen.Len(id("s").Dot("segs")).Op("-").Lit(1)).Dot("View").Assert(jen.Op("*").Id(sp.UMRCtrl.GoName)))
			}
			steps = append(steps, jen.If(id("err").Op(":=").Add(call), id("err").Op("!=").Nil()).Block(jen.Return(id("s").Dot("segs"), id("err"))))
		}
		cases = append(cases, jen.Case(ops...).Block(append([]jen.Code{jen.Comment("format " + w.Name)}, steps...)...))
	}
	cases = append(cases, jen.Default().Block(id("s").Dot("rest").Call(jen.Lit("unparsed"), jen.Len(id("s").Dot("wqe")))))

	var names []string
	for _, w := range p.Formats {
		names = append(names, w.Name)
	}
	comment(f, fmt.Sprintf(`Split cuts a WQE into its segments: the control segment, then what the
opcode's format says (%s; spec/hw/wqe.yaml), up to the ds the control
segment gives. Bytes it cannot interpret come back as RawBytes; a WQE whose
ds or contents do not fit is an error, with the segments found so far.
The segments alias wqe.`, strings.Join(names, ", ")))
	f.Func().Id("Split").Params(id("wqe").Index().Byte(), id("opt").Id("SplitOptions")).Params(jen.Index().Id("WQESegment"), jen.Error()).Block(
		jen.If(jen.Len(id("wqe")).Op("<").Id(sp.Ctrl.SizeName())).Block(
			jen.Return(jen.Nil(), jen.Qual("fmt", "Errorf").Call(jen.Lit("mlx5dv: split: %d bytes is shorter than a control segment"), jen.Len(id("wqe"))))),
		id("ctrl").Op(":=").Parens(jen.Op("*").Id(sp.Ctrl.GoName)).Call(id("wqe").Index(jen.Op(":").Id(sp.Ctrl.SizeName()))),
		id("end").Op(":=").Lit(16).Op("*").Int().Call(id("ctrl").Dot(sp.Ctrl.Accessor("ds")).Call()),
		jen.If(id("end").Op("<").Id(sp.Ctrl.SizeName()).Op("||").Id("end").Op(">").Len(id("wqe"))).Block(
			jen.Return(jen.Nil(), jen.Qual("fmt", "Errorf").Call(jen.Lit("mlx5dv: split: ds %d (%d bytes) does not fit the %d-byte WQE"), id("ctrl").Dot(sp.Ctrl.Accessor("ds")).Call(), id("end"), jen.Len(id("wqe"))))),
		id("s").Op(":=").Op("&").Id("splitter").Values(jen.Dict{id("wqe"): id("wqe").Index(jen.Op(":").Id("end"))}),
		id("s").Dot("add").Call(jen.Lit("mlx5_wqe_ctrl_seg"), id(sp.Ctrl.SizeName()), id("ctrl")),
		jen.If(id("opt").Dot("DCI")).Block(
			jen.If(id("err").Op(":=").Id("s").Dot("fixed").Call(jen.Lit("mlx5_wqe_av")), id("err").Op("!=").Nil()).Block(jen.Return(id("s").Dot("segs"), id("err")))),
		jen.Switch(id("ctrl").Dot(sp.Ctrl.Accessor("opcode")).Call()).Block(cases...),
		id("s").Dot("rest").Call(jen.Lit("padding"), jen.Len(id("s").Dot("wqe"))),
		jen.Return(id("s").Dot("segs"), jen.Nil()),
	)
}
