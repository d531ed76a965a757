package mlx5prm_test

import (
	"bufio"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/mlx5gen/mlx5gen/generated/mlx5prm"
)

// ifcTable is the table of field positions derived from mlx5_ifc.h
// (testdata/prm/derive.sh): its header names the file and the release.
const ifcTable = "../../testdata/prm/mlx5_ifc-rdma-core-v64.0.tsv"

// ifcRow is a field's bit offset and width, or an enumerator's value.
type ifcRow struct{ bit, width uint64 }

// readIFC reads the derived table: layout -> field -> row; (size) is the
// layout's size, layout (enum) holds the enumerators.
func readIFC(t *testing.T) map[string]map[string]ifcRow {
	t.Helper()
	f, err := os.Open(ifcTable)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows := map[string]map[string]ifcRow{}
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if strings.HasPrefix(line, "#") {
			continue
		}
		cols := strings.Split(line, "\t")
		if len(cols) != 4 {
			t.Fatalf("%s:%d: %d columns, want 4", ifcTable, n, len(cols))
		}
		bit, err1 := strconv.ParseUint(cols[2], 0, 64)
		width, err2 := strconv.ParseUint(cols[3], 0, 64)
		if err1 != nil || (err2 != nil && cols[3] != "-") {
			t.Fatalf("%s:%d: bad numbers %q %q", ifcTable, n, cols[2], cols[3])
		}
		if rows[cols[0]] == nil {
			rows[cols[0]] = map[string]ifcRow{}
		}
		if _, dup := rows[cols[0]][cols[1]]; dup {
			t.Fatalf("%s:%d: %s.%s twice", ifcTable, n, cols[0], cols[1])
		}
		rows[cols[0]][cols[1]] = ifcRow{bit, width}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return rows
}

// TestMLX5IFC compares every layout, field and enum value the spec
// describes with the table derived from mlx5_ifc.h: a field that moves,
// widens or is renamed in the spec fails here.
func TestMLX5IFC(t *testing.T) {
	ifc := readIFC(t)
	for _, l := range mlx5prm.Layouts {
		rows := ifc[l.Name]
		if rows == nil {
			t.Errorf("layout %s is not in %s", l.Name, ifcTable)
			continue
		}
		if got, want := uint64(l.Bits), rows["(size)"].width; got != want {
			t.Errorf("layout %s: %#x bits, mlx5_ifc.h says %#x", l.Name, got, want)
		}
		for _, f := range l.Fields {
			r, ok := rows[f.Name]
			switch {
			case !ok:
				t.Errorf("%s.%s is not a field of mlx5_ifc.h's %s", l.Name, f.Name, l.Name)
			case uint64(f.Bit) != r.bit || uint64(f.Width) != r.width:
				t.Errorf("%s.%s: bit %#x width %#x, mlx5_ifc.h says bit %#x width %#x", l.Name, f.Name, f.Bit, f.Width, r.bit, r.width)
			}
		}
	}
	for _, e := range mlx5prm.Enums {
		for _, v := range e.Values {
			r, ok := ifc["(enum)"][v.Name]
			switch {
			case !ok:
				t.Errorf("enum %s: %s is not in %s", e.Name, v.Name, ifcTable)
			case r.bit != v.Value:
				t.Errorf("enum %s: %s = %#x, mlx5_ifc.h says %#x", e.Name, v.Name, v.Value, r.bit)
			}
		}
	}
}

// TestMLX5IFCCoverage keeps the spec's promises: the commands and
// capability bits signature and crypto need are described.
func TestMLX5IFCCoverage(t *testing.T) {
	want := map[string][]string{
		"mbox_in":                 {"opcode", "uid", "op_mod"},
		"mbox_out":                {"status", "syndrome"},
		"mkc":                     {"free", "access_mode_4_2", "umr_en", "a", "rw", "rr", "lw", "lr", "access_mode_1_0", "qpn", "mkey_7_0", "length64", "bsf_en", "pd", "start_addr", "len", "bsf_octword_size", "translations_octword_size", "log_page_size", "crypto_en"},
		"create_mkey_in":          {"opcode", "memory_key_mkey_entry"},
		"create_mkey_out":         {"status", "syndrome", "mkey_index"},
		"destroy_mkey_in":         {"opcode", "mkey_index"},
		"create_psv_in":           {"opcode", "num_psv", "pd"},
		"create_psv_out":          {"psv0_index", "psv1_index", "psv2_index", "psv3_index"},
		"destroy_psv_in":          {"opcode", "psvn"},
		"general_obj_in_cmd_hdr":  {"opcode", "obj_type", "obj_id"},
		"general_obj_out_cmd_hdr": {"status", "syndrome", "obj_id"},
		"encryption_key_obj":      {"key_size", "has_keytag", "key_purpose", "pd", "key", "opaque"},
		"query_hca_cap_in":        {"opcode", "op_mod"},
		"query_hca_cap_out":       {"capability"},
		"cmd_hca_cap":             {"sho", "sigerr_domain_and_sig_type", "sig_block_4048", "sig_crc32c", "sig_crc64_xp10", "crypto", "aes_xts_single_block_le_tweak", "aes_xts_multi_block_be_tweak", "general_obj_types"},
		"crypto_caps":             {"wrapped_crypto_operational", "wrapped_import_method", "log_max_num_deks"},
	}
	for name, fields := range want {
		l := mlx5prm.LayoutByName(name)
		if l == nil {
			t.Errorf("layout %s is not described", name)
			continue
		}
	next:
		for _, f := range fields {
			for _, g := range l.Fields {
				if g.Name == f {
					continue next
				}
			}
			t.Errorf("%s.%s is not described", name, f)
		}
	}
}
