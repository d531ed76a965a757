package sim_test

import (
	"strings"
	"testing"

	"github.com/mlx5gen/mlx5gen/generated/mlx5prm"
	"github.com/mlx5gen/mlx5gen/runtime/device"
	"github.com/mlx5gen/mlx5gen/runtime/device/devicetest"
	"github.com/mlx5gen/mlx5gen/runtime/sim"
)

// queryCap runs QUERY_HCA_CAP of one page (current settings).
func queryCap(c *device.Context, page mlx5prm.HCACapOpMod) (*mlx5prm.QueryHCACapOut, error) {
	in := make([]byte, mlx5prm.QueryHCACapInSize)
	out := make([]byte, mlx5prm.QueryHCACapOutSize)
	v, _ := mlx5prm.ViewQueryHCACapIn(in)
	v.SetOpcode(mlx5prm.MLX5_CMD_OP_QUERY_HCA_CAP)
	v.SetOpMod(uint16(page) | 1)
	err := c.DevxGeneralCmd(in, out)
	o, _ := mlx5prm.ViewQueryHCACapOut(out)
	return o, err
}

// TestQueryHCACap: the capability pages say what Info's Caps say, for a
// device with the multi-block AES-XTS engine and one without.
func TestQueryHCACap(t *testing.T) {
	for _, name := range []string{"sim:hca-default", "sim:hca-single"} {
		caps := sim.DefaultCaps()
		if name == "sim:hca-single" {
			caps.CryptoMultiBlock = false
		}
		// Created on first use: the fabric is the process's, and -count
		// runs the test again in the same process.
		if sim.Fabric().Device(strings.TrimPrefix(name, sim.Prefix)) == nil {
			if _, err := sim.NewDevice(name, caps); err != nil {
				t.Fatal(err)
			}
		}
		c := devicetest.Must[*device.Context](t, "Open")(device.Open(name))
		info := c.Info().Caps
		g, err := queryCap(c, mlx5prm.MLX5_SET_HCA_CAP_OP_MOD_GENERAL_DEVICE)
		if err != nil {
			t.Fatal(err)
		}
		h := g.CapabilityCmdHCACap()
		sig := h.Sho() == 1 && h.SigerrDomainAndSigType() == 1
		if sig != info.Signature || (h.AESXTSSingleBlockLETweak() == 1) != info.CryptoSingleBlock ||
			(h.AESXTSMultiBlockBETweak() == 1) != info.CryptoMultiBlock || h.Crypto() != 1 ||
			h.GeneralObjTypes()&(1<<uint(mlx5prm.MLX5_OBJ_TYPE_DEK)) == 0 {
			t.Errorf("%s: general page % x disagrees with %+v", name, g.Capability()[:64], info)
		}
		cp, err := queryCap(c, mlx5prm.MLX5_SET_HCA_CAP_OP_MOD_CRYPTO)
		if err != nil || cp.CapabilityCryptoCaps().WrappedImportMethod() != 0 || cp.CapabilityCryptoCaps().FailedSelftests() != 0 {
			t.Errorf("%s: crypto page: %v", name, err)
		}
		if _, err := queryCap(c, mlx5prm.MLX5_SET_HCA_CAP_OP_MOD_GENERAL_DEVICE_CAP_2); err == nil {
			t.Errorf("%s: a page the simulator does not answer succeeded", name)
		}
		c.Close()
	}
}
