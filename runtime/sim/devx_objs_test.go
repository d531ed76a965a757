package sim_test

import (
	"errors"
	"syscall"
	"testing"

	mlx "github.com/mlx5gen/mlx5gen/generated/mlx5dv"
	"github.com/mlx5gen/mlx5gen/generated/mlx5prm"
	"github.com/mlx5gen/mlx5gen/runtime/device"
	"github.com/mlx5gen/mlx5gen/runtime/device/devicetest"
	"github.com/mlx5gen/mlx5gen/runtime/internal/devxcmd"
	"github.com/mlx5gen/mlx5gen/runtime/sim"
)

// cmd is a command's input and an output of its layout's size.
type cmd struct{ In, Out []byte }

func psvCmd(pdn uint32) (cmd, error) {
	in, err := devxcmd.CreatePSV(pdn)
	return cmd{in, make([]byte, mlx5prm.CreatePSVOutSize)}, err
}

func mkeyCmd(pdn uint32, sig bool, entries int) (cmd, error) {
	in, err := devxcmd.CreateMkey(devxcmd.Mkey{PDN: pdn, MaxEntries: entries, Signature: sig})
	return cmd{in, make([]byte, mlx5prm.CreateMkeyOutSize)}, err
}

func dekCmd(pdn uint32) (cmd, error) {
	in, err := devxcmd.CreateDEK(devxcmd.DEK{PDN: pdn})
	return cmd{in, make([]byte, mlx5prm.GeneralObjOutCmdHdrSize)}, err
}

// devxRefused runs a create command that must fail with status and
// syndrome, and checks nothing was made.
func devxRefused(t *testing.T, c *device.Context, what string, cmd cmd, status device.DevxStatus, syndrome uint32) {
	t.Helper()
	o, err := c.DevxObjCreate(cmd.In, cmd.Out)
	var de *device.DevxError
	if o != nil || !errors.As(err, &de) || de.Status != status || de.Syndrome != syndrome || !errors.Is(err, syscall.EREMOTEIO) {
		t.Errorf("%s: %v (%v), want status %v syndrome %#x", what, o, err, status, syndrome)
	}
}

// TestDevxObjectCommands: the commands the device API sends for mkeys,
// PSVs and DEKs, executed by the simulator through the public DEVX API:
// what they make, and what a device refuses.
func TestDevxObjectCommands(t *testing.T) {
	c := devicetest.Must[*device.Context](t, "Open")(device.Open("sim:devx-objects"))
	defer c.Close()
	pd := devicetest.Must[*device.PD](t, "AllocPD")(c.AllocPD())
	pdn := devicetest.Must[uint32](t, "PDN")(pd.PDN())
	must := func(cmd cmd, err error) cmd {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return cmd
	}

	// Two PSVs and a signature mkey made by commands; the PSVs are in
	// use once a configuration names them, so they are destroyed last.
	psv := must(psvCmd(pdn))
	po := devicetest.Must[*device.DevxObj](t, "CREATE_PSV")(c.DevxObjCreate(psv.In, psv.Out))
	ix, _ := devxcmd.PSVIndex(psv.Out)
	if ix == 0 {
		t.Fatal("CREATE_PSV gave PSV index 0")
	}
	mk := must(mkeyCmd(pdn, true, 4))
	mo := devicetest.Must[*device.DevxObj](t, "CREATE_MKEY")(c.DevxObjCreate(mk.In, mk.Out))
	if ix, _ := devxcmd.MkeyIndex(mk.Out); devxcmd.MkeyKey(ix)&0x80000000 == 0 {
		t.Errorf("mkey index %#x: want an mkey key (bit 31)", ix)
	}
	if err := mo.Close(); err != nil {
		t.Fatal(err)
	}
	if err := po.Close(); err != nil {
		t.Fatal(err)
	}

	// A DEK by command: its object id is what a crypto BSF names.
	dek := must(dekCmd(pdn))
	do := devicetest.Must[*device.DevxObj](t, "CREATE_GENERAL_OBJECT")(c.DevxObjCreate(dek.In, dek.Out))
	if id, _ := devxcmd.ObjID(dek.Out); id == 0 {
		t.Error("the DEK's object id is 0")
	}
	if err := do.Close(); err != nil {
		t.Fatal(err)
	}

	// Refusals, with the statuses docs/simulator.md's ledger gives.
	devxRefused(t, c, "CREATE_PSV of no PD", must(psvCmd(pdn+1000)), device.DevxStatusBadParam, sim.SyndromeNoPD)
	five := must(psvCmd(pdn))
	in, _ := mlx5prm.ViewCreatePSVIn(five.In)
	in.SetNumPSV(5)
	devxRefused(t, c, "num_psv 5", five, device.DevxStatusBadParam, sim.SyndromeNumPSV)
	mtt := must(mkeyCmd(pdn, false, 4))
	mi, _ := mlx5prm.ViewCreateMkeyIn(mtt.In)
	mi.MemoryKeyMkeyEntry().SetAccessMode1To0(mlx5prm.MLX5_MKC_ACCESS_MODE_MTT)
	devxRefused(t, c, "an MTT mkey", mtt, device.DevxStatusBadParam, sim.SyndromeMkeyForm)
	none := must(mkeyCmd(pdn, false, 4))
	ni, _ := mlx5prm.ViewCreateMkeyIn(none.In)
	ni.MemoryKeyMkeyEntry().SetTranslationsOctwordSize(0)
	devxRefused(t, c, "no translations", none, device.DevxStatusBadParam, sim.SyndromeTranslations)
	devxRefused(t, c, "CREATE_MKEY of no PD", must(mkeyCmd(pdn+1000, false, 4)),
		device.DevxStatusBadParam, sim.SyndromeNoPD)
	bad := must(dekCmd(pdn))
	ki, _ := mlx5prm.ViewCreateEncryptionKeyObjIn(bad.In)
	ki.KeyObj().SetKeySize(2)
	devxRefused(t, c, "key size 2", bad, device.DevxStatusBadParam, sim.SyndromeKeyField)
	login := must(dekCmd(pdn))
	li, _ := mlx5prm.ViewCreateEncryptionKeyObjIn(login.In)
	li.Hdr().SetObjType(mlx5prm.MLX5_OBJ_TYPE_CRYPTO_LOGIN)
	devxRefused(t, c, "a crypto login object", login, device.DevxStatusBadParam, sim.SyndromeObjType)
	short := must(mkeyCmd(pdn, false, 4))
	short.In = short.In[:100]
	devxRefused(t, c, "a short CREATE_MKEY", short, device.DevxStatusBadInputLen, sim.SyndromeShortInput)
}

// TestDevxMkeyPath: PD.CreateMkey and CreateDEK on the simulator go
// through the commands: the signature mkey's PSVs are two PSVs the
// engine made (a third CREATE_PSV gets the next index), and a DEK's
// object id is a general object's.
func TestDevxMkeyPath(t *testing.T) {
	c := devicetest.Must[*device.Context](t, "Open")(device.Open("sim:devx-path"))
	defer c.Close()
	pd := devicetest.Must[*device.PD](t, "AllocPD")(c.AllocPD())
	mk := devicetest.Must[*device.Mkey](t, "CreateMkey")(pd.CreateMkey(mlx.MLX5DV_MKEY_INIT_ATTR_FLAGS_INDIRECT|mlx.MLX5DV_MKEY_INIT_ATTR_FLAGS_BLOCK_SIGNATURE, 4))
	mem, wire := mk.Mkey().MemPSV, mk.Mkey().WirePSV
	pdn, _ := pd.PDN()
	psv, _ := psvCmd(pdn)
	o := devicetest.Must[*device.DevxObj](t, "CREATE_PSV")(c.DevxObjCreate(psv.In, psv.Out))
	next, _ := devxcmd.PSVIndex(psv.Out)
	if mem == 0 || wire != mem+1 || next != wire+1 {
		t.Errorf("PSVs %#x, %#x then %#x: want the engine's PSVs in the order CREATE_PSV made them", mem, wire, next)
	}
	o.Close()
	if err := mk.Close(); err != nil {
		t.Fatal(err)
	}
}
