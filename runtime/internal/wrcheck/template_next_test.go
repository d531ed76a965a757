package wrcheck

import (
	"fmt"
	"testing"

	mlx "github.com/mlx5gen/mlx5gen/generated/mlx5dv"
)

// TestTemplateNextAgrees: TemplateNext takes a template configuration
// only where ConfigureList would, and then records what it records; it
// refuses, recording nothing, after anything that may change the answer
// between two configurations of an mkey: the mkey's state left unknown,
// a tag the QP does not take, a signature error the poller counted,
// another template's attributes, another work request, new wr_flags,
// another mkey configured; it takes another template of the same kind
// only where ConfigureList records the same, and one of the other kind
// or whose COPY_MASK ConfigureList refuses never; and it holds the layout and the length to the rules as
// ConfigureList does.
func TestTemplateNextAgrees(t *testing.T) {
	wire := &mlx.SigBlockDomain{SigType: mlx.MLX5DV_SIG_TYPE_T10DIF, BlockSize: mlx.MLX5DV_BLOCK_SIZE_512}
	wire.SetSigDif(&mlx.SigT10DIF{BG: 0xffff, AppTag: 1, RefTag: 2})
	templates := map[bool][2]*MkeyTemplate{}
	for _, sig := range []bool{false, true} {
		var attr *mlx.SigBlockAttr
		if sig {
			attr = &mlx.SigBlockAttr{Wire: wire}
		}
		var pair [2]*MkeyTemplate // the template, and another with the same attributes (and another tag)
		for i := range pair {
			tmpl, err := NewMkeyTemplate(mlx.IBV_ACCESS_LOCAL_WRITE, attr)
			if err != nil {
				t.Fatal(err)
			}
			pair[i] = tmpl
		}
		templates[sig] = pair
	}
	// A signature template whose COPY_MASK spans domains of different
	// block sizes: ConfigureList refuses it.
	mem := &mlx.SigBlockDomain{SigType: mlx.MLX5DV_SIG_TYPE_T10DIF, BlockSize: mlx.MLX5DV_BLOCK_SIZE_4096}
	mem.SetSigDif(&mlx.SigT10DIF{BG: 0xffff, AppTag: 1, RefTag: 2})
	badCopy, err := NewMkeyTemplate(mlx.IBV_ACCESS_LOCAL_WRITE, &mlx.SigBlockAttr{Mem: mem, Wire: wire,
		Flags: mlx.MLX5DV_SIG_BLOCK_ATTR_FLAG_COPY_MASK, CopyMask: 0xff})
	if err != nil || badCopy.copyOK {
		t.Fatalf("the COPY_MASK template: %v", err)
	}
	const inline = uint32(mlx.IBV_SEND_INLINE)
	perturbations := []string{"none", "signature state", "unknown", "tag", "signature error", "other attributes", "another work request", "new wr_flags", "another mkey"}
	taken := 0
	for _, tagOK := range []bool{false, true} {
		for _, sig := range []bool{false, true} {
			for _, perturb := range perturbations {
				// What must send the configuration back to ConfigureList
				// (with the run's own template; the other attributes are
				// the second template's, which it may take).
				refuse := perturb == "unknown" || perturb == "another work request" || perturb == "new wr_flags" || perturb == "another mkey" ||
					perturb == "tag" && !tagOK || sig && (perturb == "signature error" || perturb == "other attributes")
				for _, entries := range []int{0, 1, 4, 17, 21, 33} {
					for _, length := range []uint64{4096, 1 << 33} {
						for _, short := range []bool{true, false} {
							for which, next := range []*MkeyTemplate{templates[sig][0], templates[sig][1], templates[!sig][0], badCopy} {
								name := fmt.Sprintf("tag support %v, signature %v, %s, %d entries, length %d, short %v, template %d", tagOK, sig, perturb, entries, length, short, which)
								c, m, m2 := templateRun(t, name, tagOK, sig, templates[sig][0])
								tmpl := templates[sig][0]
								switch perturb {
								case "signature state": // another QP's configuration left another
									m.Sig = SigInit
								case "unknown":
									m.Unknown = true
								case "tag":
									m.LKey |= 0x5
								case "signature error":
									m.SigError()
								case "other attributes":
									templates[sig][1].copyAttrs(m)
								case "another work request":
									if err := c.Builder(mlx.FnWRLocalInv, 0); err != nil {
										t.Fatalf("%s: %v", name, err)
									}
								case "new wr_flags":
									c.EndRun()
								case "another mkey":
									if !c.ConfigureList(mlx.FnWRMkeyConfigure, inline, m2, tmpl, 1, 4096, true, false) {
										t.Fatalf("%s: the other mkey's configuration was refused", name)
									}
								}
								m0, c0 := *m, *c
								tmpl = next
								ok := c.TemplateNext(m, tmpl, entries, length, short)
								after, wr, wrs := *m, c.wr, c.wrs
								*m, *c = m0, c0
								ok2 := c.ConfigureList(mlx.FnWRMkeyConfigure, inline, m, tmpl, entries, length, short, false)
								switch {
								case ok && !ok2:
									t.Fatalf("%s: TemplateNext took what ConfigureList refuses", name)
								case ok && (wr != c.wr || wrs != c.wrs || !after.SameState(m) || after.attrTag != m.attrTag):
									t.Fatalf("%s: TemplateNext recorded %+v (%d), mkey %+v; ConfigureList %+v (%d), %+v", name, wr, wrs, after, c.wr, c.wrs, *m)
								case !ok && (wr != c0.wr || wrs != c0.wrs || after.Length != m0.Length || after.Sig != m0.Sig):
									t.Fatalf("%s: TemplateNext refused but recorded", name)
								case ok && (refuse && !(perturb == "other attributes" && which == 1) || which >= 2):
									t.Fatalf("%s: TemplateNext took it", name)
								}
								if ok {
									taken++
								}
							}
						}
					}
				}
			}
		}
	}
	if taken < 40 {
		t.Fatalf("TemplateNext took %d configurations: its common case is not tested", taken)
	}
}

// templateRun is a chain whose batch has just configured m (with a tag
// of 0, its signature state known) through ConfigureList with tmpl, and
// an mkey m2 of the same kind for the same template.
func templateRun(t *testing.T, name string, tagOK, sig bool, tmpl *MkeyTemplate) (*Chain, *Mkey, *Mkey) {
	t.Helper()
	const inline = uint32(mlx.IBV_SEND_INLINE)
	flags := mlx.MLX5DV_MKEY_INIT_ATTR_FLAGS_INDIRECT
	n := uint8(2)
	if sig {
		flags |= mlx.MLX5DV_MKEY_INIT_ATTR_FLAGS_BLOCK_SIGNATURE
		n = 3
	}
	c := New(&QP{Type: mlx.QPRC, SendOps: 0x3ff, MlxSendOps: 0x1f, MaxInlineData: 316, MaxSendSGE: 2, MkeyTagSupported: tagOK})
	m, m2 := NewMkey(0x100, flags, 32), NewMkey(0x200, flags, 32) // more entries than the QP takes in one call
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	// The calls one by one first: a fresh mkey's signature starts with an
	// error-count update pending, which the template path leaves to them.
	for _, mk := range []*Mkey{m, m2} {
		if _, err := c.MkeyConfigure(mlx.FnWRMkeyConfigure, inline, mk, n, &mlx.MkeyConfAttr{}); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		c.MkeyAccess(mlx.FnWRSetMkeyAccessFlags, uint32(mlx.IBV_ACCESS_LOCAL_WRITE))
		c.MkeyLayout(mlx.FnWRSetMkeyLayoutList, Layout{Entries: 1, Length: 4096})
		if sig {
			c.MkeySigBlock(mlx.FnWRSetMkeySigBlock, tmpl.SigAttr())
		}
	}
	if _, err := c.Complete(mlx.FnWRComplete); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	if !c.ConfigureList(mlx.FnWRMkeyConfigure, inline, m, tmpl, 1, 4096, true, false) {
		t.Fatalf("%s: the run's first configuration was refused", name)
	}
	return c, m, m2
}
