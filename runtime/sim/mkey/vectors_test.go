package mkey

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"testing"

	mlx "github.com/mlx5gen/mlx5gen/generated/mlx5dv"
	"github.com/mlx5gen/mlx5gen/runtime/sim/sigblock"
)

// The libmlx5 vectors (testdata/vectors, see its README) in the parts this
// test reads.
type vecFile struct {
	Cases []vecCase `json:"cases"`
}

type vecCase struct {
	ID    string `json:"id"`
	Setup struct {
		Mkeys []struct {
			Name      string          `json:"name"`
			LKey      uint32          `json:"lkey"`
			NumDesc   int             `json:"num_desc"`
			SigRaw    json.RawMessage `json:"signature"`
			CryptoRaw json.RawMessage `json:"crypto"`
		} `json:"mkeys"`
		Device struct {
			Engines struct {
				Value int `json:"value"`
			} `json:"crypto_engines"`
		} `json:"device_context"`
		DEKs []struct {
			Name string `json:"name"`
			ID   uint32 `json:"devx_object_id"`
		} `json:"deks"`
	} `json:"setup"`
	Calls  []vecCall `json:"calls"`
	Result struct {
		Batches []struct {
			Calls  [2]int `json:"calls"`
			Posted bool   `json:"posted"`
			Return int    `json:"return"`
			WQEs   []struct {
				Hex string `json:"hex"`
			} `json:"wqes"`
		} `json:"batches"`
	} `json:"result"`
}

type vecCall struct {
	Fn   string         `json:"fn"`
	Args map[string]any `json:"args"`
}

// want is the configuration the calls of posted batches give an mkey.
type want struct {
	access   mlx.WQEMkeyContextAccessFlags
	ents     []entry
	repeat   uint64
	layout   bool
	inter    bool
	sig      map[string]any // the sig_block attr, nil: none
	crypto   map[string]any
	psvs     [2]uint32
	hasCrypt bool
}

// TestLibmlx5Vectors executes every UMR and SET_PSV WQE libmlx5 wrote in
// the vectors and checks the mkeys end up as the calls configured them:
// access flags, layout entries, signature domains and crypto attributes.
func TestLibmlx5Vectors(t *testing.T) {
	files := []string{"mkey_configure.json", "mr_list.json", "mr_interleaved.json", "sig_block.json", "crypto.json"}
	n := 0
	for _, f := range files {
		raw, err := os.ReadFile("../../../testdata/vectors/" + f)
		if err != nil {
			t.Fatal(err)
		}
		var vf vecFile
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.UseNumber() // 64-bit seeds
		if err := dec.Decode(&vf); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		for _, c := range vf.Cases {
			t.Run(c.ID, func(t *testing.T) { n += runVector(t, &c) })
		}
	}
	if n < 132 {
		t.Fatalf("only %d UMR/SET_PSV WQEs executed", n)
	}
}

func runVector(t *testing.T, c *vecCase) int {
	tab := NewTable(nil)
	tab.CryptoMultiBlock = c.Setup.Device.Engines.Value&4 != 0 // MLX5DV_CRYPTO_ENGINES_CAP_AES_XTS_MULTI_BLOCK
	names := map[string]uint32{}
	wants := map[uint32]*want{}
	for _, m := range c.Setup.Mkeys {
		mk := &mkey{index: m.LKey >> 8, tag: uint8(m.LKey), numDesc: m.NumDesc, free: true,
			flags: mlx.MLX5DV_MKEY_INIT_ATTR_FLAGS_INDIRECT}
		var sig struct {
			Mem  uint32 `json:"mem_psv_index"`
			Wire uint32 `json:"wire_psv_index"`
		}
		if string(m.SigRaw) != "null" {
			json.Unmarshal(m.SigRaw, &sig)
			mk.flags |= mlx.MLX5DV_MKEY_INIT_ATTR_FLAGS_BLOCK_SIGNATURE
			mk.memPSV, mk.wirePSV, mk.ownPSVs = sig.Mem, sig.Wire, true
			tab.psvs[sig.Mem] = &psv{pdn: mk.pdn}
			tab.psvs[sig.Wire] = &psv{pdn: mk.pdn}
		}
		if string(m.CryptoRaw) != "null" {
			mk.flags |= mlx.MLX5DV_MKEY_INIT_ATTR_FLAGS_CRYPTO
		}
		tab.mkeys[mk.index] = mk
		names[m.Name] = m.LKey
		wants[m.LKey] = &want{psvs: [2]uint32{sig.Mem, sig.Wire}}
	}
	deks := map[string]uint32{}
	for _, d := range c.Setup.DEKs {
		tab.deks[d.ID&0xffffff] = &dek{key: make([]byte, 32)} // DEK ids are 24 bits in the BSF
		deks[d.Name] = d.ID & 0xffffff
	}
	executed := 0
	for _, b := range c.Result.Batches {
		if !b.Posted || b.Return != 0 {
			continue
		}
		var cur *want
		for _, call := range c.Calls[b.Calls[0] : b.Calls[1]+1] {
			cur = expect(t, call, cur, names, wants)
		}
		for i, w := range b.WQEs {
			wqe, err := hex.DecodeString(w.Hex)
			if err != nil {
				t.Fatal(err)
			}
			switch mlx.Opcode(wqe[3]) {
			case mlx.MLX5_OPCODE_UMR:
				err = tab.ExecUMR(wqe)
			case mlx.MLX5_OPCODE_SET_PSV:
				err = tab.ExecSetPSV(wqe)
			default:
				continue
			}
			if err != nil {
				t.Fatalf("WQE %d: %v", i, err)
			}
			executed++
		}
	}
	for key, w := range wants {
		if err := compare(tab, tab.mkeys[key>>8], w, deks); err != nil {
			t.Errorf("mkey %#x: %v", key, err)
		}
	}
	return executed
}

// expect folds one call into the wanted state of the mkey it configures.
func expect(t *testing.T, call vecCall, cur *want, names map[string]uint32, wants map[uint32]*want) *want {
	a := call.Args
	if name, ok := a["mkey"].(string); ok {
		cur = wants[names[name]]
	}
	if cur == nil {
		return nil
	}
	switch call.Fn {
	case "mlx5dv_wr_mkey_configure":
		if attr, ok := a["attr"].(map[string]any); ok && num(attr["conf_flags"])&1 != 0 {
			cur.sig, cur.crypto = nil, nil
		}
	case "mlx5dv_wr_set_mkey_sig_block":
		cur.sig = a["attr"].(map[string]any)
	case "mlx5dv_wr_set_mkey_crypto":
		cur.crypto = a["attr"].(map[string]any)
	}
	if acc, ok := a["access_flags"]; ok {
		cur.access = ctxAccess(num(acc))
	}
	if sges, ok := a["sge"].([]any); ok {
		cur.layout, cur.inter, cur.ents, cur.repeat = true, false, nil, 0
		for _, s := range sges {
			s := s.(map[string]any)
			if num(s["length"]) != 0 {
				cur.ents = append(cur.ents, entry{key: uint32(num(s["lkey"])), addr: num(s["addr"]), n: num(s["length"])})
			}
		}
	}
	if data, ok := a["data"].([]any); ok {
		cur.layout, cur.inter, cur.ents, cur.repeat = true, true, nil, num(a["repeat_count"])
		for _, d := range data {
			d := d.(map[string]any)
			n := num(d["bytes_count"])
			cur.ents = append(cur.ents, entry{key: uint32(num(d["lkey"])), addr: num(d["addr"]), n: n, stride: (n + num(d["bytes_skip"])) & 0xffff})
		}
	}
	return cur
}

// num reads a JSON number or a {value, ...} enum or flag set.
func num(v any) uint64 {
	switch x := v.(type) {
	case json.Number:
		v, err := strconv.ParseUint(x.String(), 10, 64)
		if err != nil {
			panic(err)
		}
		return v
	case map[string]any:
		return num(x["value"])
	case bool:
		if x {
			return 1
		}
	}
	return 0
}

func ctxAccess(ibv uint64) mlx.WQEMkeyContextAccessFlags {
	var f mlx.WQEMkeyContextAccessFlags
	for bit, flag := range map[uint64]mlx.WQEMkeyContextAccessFlags{1: mlx.MLX5_WQE_MKEY_CONTEXT_ACCESS_FLAGS_LOCAL_WRITE,
		2: mlx.MLX5_WQE_MKEY_CONTEXT_ACCESS_FLAGS_REMOTE_WRITE, 4: mlx.MLX5_WQE_MKEY_CONTEXT_ACCESS_FLAGS_REMOTE_READ,
		8: mlx.MLX5_WQE_MKEY_CONTEXT_ACCESS_FLAGS_ATOMIC} {
		if ibv&bit != 0 {
			f |= flag
		}
	}
	return f
}

// compare checks an mkey against the wanted configuration.
func compare(tab *Table, m *mkey, w *want, deks map[string]uint32) error {
	if m.access != w.access {
		return fmt.Errorf("access %#x, want %#x", m.access, w.access)
	}
	if w.layout {
		l := &m.layout
		if l.interleaved != w.inter || l.repeat != w.repeat || len(l.ents) != len(w.ents) {
			return fmt.Errorf("layout %+v, want entries %+v repeat %d", *l, w.ents, w.repeat)
		}
		for i, e := range w.ents {
			g := l.ents[i]
			if g.key != e.key || g.addr != e.addr || g.n != e.n || g.stride != e.stride {
				return fmt.Errorf("entry %d: %+v, want %+v", i, g, e)
			}
		}
		if m.free {
			return fmt.Errorf("free after a configuration")
		}
	}
	if err := compareSig(tab, m, w); err != nil {
		return err
	}
	return compareCrypto(m, w, deks)
}

func compareSig(tab *Table, m *mkey, w *want) error {
	if w.sig == nil {
		if m.sig != nil {
			return fmt.Errorf("a signature %+v, want none", *m.sig)
		}
		return nil
	}
	if m.sig == nil {
		return fmt.Errorf("no signature, want %v", w.sig)
	}
	if uint64(m.sig.checkMask) != num(w.sig["check_mask"]) {
		return fmt.Errorf("check mask %#x, want %v", m.sig.checkMask, w.sig["check_mask"])
	}
	if num(w.sig["flags"])&1 != 0 && uint64(m.sig.copyMask) != num(w.sig["copy_mask"]) {
		return fmt.Errorf("copy mask %#x, want %v", m.sig.copyMask, w.sig["copy_mask"])
	}
	for i, name := range []string{"mem", "wire"} {
		c := [2]*domainConf{&m.sig.mem, &m.sig.wire}[i]
		if err := compareDomain(tab.domain(c), c.psv, w.sig[name], w.psvs[i]); err != nil {
			return fmt.Errorf("%s domain: %v", name, err)
		}
	}
	return nil
}

func compareDomain(d sigblock.Domain, psv uint32, w any, wantPSV uint32) error {
	wd, _ := w.(map[string]any)
	if wd == nil {
		if d.Kind != sigblock.KindNone {
			return fmt.Errorf("%+v, want none", d)
		}
		return nil
	}
	bs, _ := sigblock.BlockSize(uint32(num(wd["block_size"])))
	if d.BlockSize != bs || psv != wantPSV {
		return fmt.Errorf("block size %d psv %#x, want %d %#x", d.BlockSize, psv, bs, wantPSV)
	}
	sig := wd["sig"].(map[string]any)
	if crc, ok := sig["crc"].(map[string]any); ok {
		seed, _ := sigblock.CRCType(num(crc["type"])).Seed(num(crc["seed"]))
		if d.Kind != sigblock.KindCRC || uint64(d.CRC) != num(crc["type"]) || d.Seed != seed {
			return fmt.Errorf("%+v, want CRC %v", d, crc)
		}
		return nil
	}
	dif := sig["t10dif"].(map[string]any)
	flags := num(dif["flags"])
	if flags&sigblock.FlagAppRefEscape != 0 {
		flags &^= sigblock.FlagAppEscape // libmlx5 writes the stricter escape only
	}
	if d.Kind != sigblock.KindT10DIF || uint64(d.BGType) != num(dif["bg_type"]) || uint64(d.BG) != num(dif["bg"]) ||
		uint64(d.AppTag) != num(dif["app_tag"]) || uint64(d.RefTag) != num(dif["ref_tag"]) || uint64(d.Flags) != flags {
		return fmt.Errorf("%+v, want T10-DIF %v", d, dif)
	}
	return nil
}

func compareCrypto(m *mkey, w *want, deks map[string]uint32) error {
	if w.crypto == nil {
		if m.crypto != nil {
			return fmt.Errorf("crypto %+v, want none", *m.crypto)
		}
		return nil
	}
	c, a := m.crypto, w.crypto
	if c == nil {
		return fmt.Errorf("no crypto, want %v", a)
	}
	tweak, _ := hex.DecodeString(a["initial_tweak_hex"].(string))
	keytag, _ := hex.DecodeString(a["keytag_hex"].(string))
	unit, _ := sigblock.BlockSize(uint32(num(a["data_unit_size"])))
	if c.encOnTx != (num(a["encrypt_on_tx"]) == 1) || c.sigAfter != (num(a["signature_crypto_order"]) == 0) ||
		c.unit != unit || c.dekID != deks[a["dek"].(string)] || string(c.tweak[:]) != string(tweak) || string(c.keytag[:]) != string(keytag) {
		return fmt.Errorf("crypto %+v, want %v", *c, a)
	}
	return nil
}
