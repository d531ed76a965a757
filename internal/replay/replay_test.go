package replay

import (
	"bytes"
	"encoding/json"
	"fmt"
	"github.com/mlx5gen/mlx5gen/generated/mlx5rules"
	"github.com/mlx5gen/mlx5gen/internal/vectors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestVectors replays every reference vector: each must pass, byte for
// byte, or behave exactly as the rule it diverges by says.
func TestVectors(t *testing.T) {
	files, err := filepath.Glob("../../testdata/vectors/*.json")
	if err != nil || len(files) == 0 {
		t.Fatalf("no vector files: %v", err)
	}
	n := 0
	for _, path := range files {
		f, err := vectors.Load(path)
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range File(f) {
			n++
			if o.Err != nil {
				t.Errorf("%s %s: %v", filepath.Base(path), o.ID, o.Err)
			}
		}
	}
	if n != 175 {
		t.Errorf("%d cases, want 175", n)
	}
}

// TestHandmade replays internal/replay/testdata: ibv_wr_bind_mw, and
// queues that start with outstanding work requests (README.md there says
// how their bytes were derived).
func TestHandmade(t *testing.T) {
	for _, name := range []string{"bind_mw.json", "outstanding.json"} {
		f, err := vectors.Load(filepath.Join("testdata", name))
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range File(f) {
			if o.Err != nil || len(o.Divergences) != 0 {
				t.Errorf("%s %s: %v %v", name, o.ID, o.Err, o.Divergences)
			}
		}
	}
}

// doc is a vector file as generic JSON, to be changed by a test.
type doc map[string]any

func loadDoc(t *testing.T, path string) doc {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var v doc
	if err := d.Decode(&v); err != nil {
		t.Fatal(err)
	}
	return v
}

func (d doc) cases() []any { return d["cases"].([]any) }

// only keeps the case with this id, renamed to a name no code has seen.
func (d doc) only(t *testing.T, id string) map[string]any {
	t.Helper()
	for _, c := range d.cases() {
		if m := c.(map[string]any); m["id"] == id {
			m["id"] = "renamed_" + fmt.Sprint(len(id)*7919)
			d["cases"] = []any{m}
			return m
		}
	}
	t.Fatalf("no case %s", id)
	return nil
}

func (d doc) load(t *testing.T) *vectors.File {
	t.Helper()
	b, err := json.Marshal(d)
	if err != nil {
		t.Fatal(err)
	}
	f, err := vectors.Read("changed.json", bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// at walks a path of keys and indexes.
func at(v any, path ...any) any {
	for _, p := range path {
		switch k := p.(type) {
		case string:
			v = v.(map[string]any)[k]
		case int:
			v = v.([]any)[k]
		}
	}
	return v
}

// TestRenamed: every shared vector, its id replaced and the cases in
// reverse order, gets the same verdict and the same divergences.
func TestRenamed(t *testing.T) {
	files, _ := filepath.Glob("../../testdata/vectors/*.json")
	for _, path := range files {
		f, err := vectors.Load(path)
		if err != nil {
			t.Fatal(err)
		}
		want := File(f)
		d := loadDoc(t, path)
		cs := d.cases()
		for i, j := 0, len(cs)-1; i < j; i, j = i+1, j-1 {
			cs[i], cs[j] = cs[j], cs[i]
		}
		for i, c := range cs {
			c.(map[string]any)["id"] = fmt.Sprintf("case_%03d", len(cs)-1-i)
		}
		got := File(d.load(t))
		for i, w := range want {
			g := got[len(got)-1-i]
			if (g.Err == nil) != (w.Err == nil) || fmt.Sprint(g.Divergences) != fmt.Sprint(w.Divergences) {
				t.Errorf("%s %s renamed %s: %v %v, want %v %v", filepath.Base(path), w.ID, g.ID, g.Err, g.Divergences, w.Err, w.Divergences)
			}
		}
	}
}

// TestDecidedByRule: the divergences come from the rules. Without
// libmlx5_accepts the rejected misuses fail; without follows the mr_list
// sums are compared with v44.0's 32-bit result and fail.
func TestDecidedByRule(t *testing.T) {
	accepts := append([]mlx5rules.RuleInfo(nil), mlx5rules.Rules...)
	follows := append([]mlx5rules.RuleInfo(nil), mlx5rules.Rules...)
	for i := range accepts {
		accepts[i].Libmlx5Accepts = false
		follows[i].Follows = ""
	}
	files, _ := filepath.Glob("../../testdata/vectors/*.json")
	failed := map[string][]string{}
	for _, path := range files {
		f, err := vectors.Load(path)
		if err != nil {
			t.Fatal(err)
		}
		for name, rules := range map[string][]mlx5rules.RuleInfo{"accepts": accepts, "follows": follows} {
			for _, o := range (&Replayer{Rules: rules}).File(f) {
				if o.Err != nil {
					failed[name] = append(failed[name], o.ID)
				}
			}
		}
	}
	if got := strings.Join(failed["accepts"], " "); got != "dci_send_stream dci_write_stream_max dci_batch_two_targets "+
		"mr_interleaved_max_entries mr_list_single_3g misuse_dci_missing_dc_addr misuse_mkey_fewer_setters" {
		t.Errorf("without libmlx5_accepts, failed: %s", got)
	}
	if got := strings.Join(failed["follows"], " "); got != "mr_list_sum_over_2g mr_list_sum_over_2g_odd mr_list_sum_exactly_2g" {
		t.Errorf("without follows, failed: %s", got)
	}
}

// TestModifiedCopies: renamed copies with a value changed fail where the
// change matters, whatever their id.
func TestModifiedCopies(t *testing.T) {
	const vec = "../../testdata/vectors/"
	for _, c := range []struct {
		name, file, id string
		change         func(c map[string]any, d doc)
		want           string // "" passes
	}{
		{"stream case as is", "dc.json", "dci_send_stream", func(map[string]any, doc) {}, ""},
		{"stream id byte", "dc.json", "dci_send_stream", func(c map[string]any, _ doc) {
			w := at(c, "result", "batches", 0, "wqes", 0).(map[string]any)
			h := []byte(w["hex"].(string))
			h[19] ^= 1 // ctrl byte 9: the stream id
			w["hex"] = string(h)
		}, "on a DCI created with 2^16 streams: batch 0 WQE 0"},
		{"libmlx5 accepted bad access flags", "rejects.json", "rej_access_bad_flags", func(c map[string]any, _ doc) {
			b := at(c, "result", "batches", 0).(map[string]any)
			b["return"], b["return_name"] = 0, "OK"
		}, "which does not document that libmlx5 accepts it"},
		{"sum without the newest result", "mr_list.json", "mr_list_sum_over_2g", func(c map[string]any, _ doc) {
			delete(c, "result_at_newest_commit")
		}, "batch 0 WQE 0"},
		{"sum recorded before 61.0", "mr_list.json", "mr_list_sum_over_2g", func(_ map[string]any, d doc) {
			at(map[string]any(d), "cross_check", "newest").(map[string]any)["describe"] = "v60.0-3-gdeadbeef"
		}, "batch 0 WQE 0"},
		{"fewer setters renamed", "rejects.json", "misuse_mkey_fewer_setters", func(map[string]any, doc) {}, ""},
		{"bind with objects inline", "../../internal/replay/testdata/bind_mw.json", "bind_mw_range", func(c map[string]any, _ doc) {
			a := at(c, "calls", 3, "args").(map[string]any)
			a["mw"] = map[string]any{"rkey": int64(0xaabbcc01)}
			a["bind_info"].(map[string]any)["mr"] = map[string]any{"name": "x", "lkey": 0x5000}
		}, ""},
		{"bind with another window", "../../internal/replay/testdata/bind_mw.json", "bind_mw_range", func(c map[string]any, _ doc) {
			at(c, "setup", "mws", 0).(map[string]any)["rkey"] = int64(0xaabbcc09)
		}, "byte 15, mlx5_wqe_ctrl_seg.imm: got aabbcc09, want aabbcc01"},
		{"bind on a DCI", "../../internal/replay/testdata/bind_mw.json", "bind_mw_range", func(c map[string]any, _ doc) {
			// libmlx5's _build_umr_wqe adds no address vector: the same bytes.
			at(c, "setup").(map[string]any)["qp_type"] = "DCI (IBV_QPT_DRIVER + MLX5DV_DCTYPE_DCI)"
		}, ""},
		{"bind with an unknown window", "../../internal/replay/testdata/bind_mw.json", "bind_mw_range", func(c map[string]any, _ doc) {
			at(c, "calls", 3, "args").(map[string]any)["mw"] = "mw9"
		}, `call 3 ibv_wr_bind_mw: argument mw: no memory window "mw9" in the setup`},
		{"full queue not full", "../../internal/replay/testdata/outstanding.json", "outstanding_full", func(c map[string]any, _ doc) {
			at(c, "setup", "sq").(map[string]any)["initial_tail"] = 9 // 11 outstanding: room for one
		}, "batch 0: ibv_wr_complete returned <nil>, want ENOMEM"},
	} {
		t.Run(c.name, func(t *testing.T) {
			d := loadDoc(t, vec+c.file)
			m := d.only(t, c.id)
			c.change(m, d)
			o := File(d.load(t))[0]
			switch {
			case c.want == "" && o.Err != nil:
				t.Errorf("failed: %v", o.Err)
			case c.want != "" && (o.Err == nil || !strings.Contains(o.Err.Error(), c.want)):
				t.Errorf("got %v, want an error containing %q", o.Err, c.want)
			}
		})
	}
}
