package vectors

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"strings"
	"testing"
)

// baseCase is the first case of rdma.json as generic JSON.
func baseCase(t *testing.T) map[string]any {
	t.Helper()
	b, err := os.ReadFile("../../testdata/vectors/rdma.json")
	if err != nil {
		t.Fatal(err)
	}
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var f map[string]any
	if err := d.Decode(&f); err != nil {
		t.Fatal(err)
	}
	return f["cases"].([]any)[0].(map[string]any)
}

func get(v any, path ...any) any {
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

// TestHostile: every malformed or oversized vector is an error naming
// the file and the place (line:column, or case and field), never a
// panic, a vacuous pass or unbounded memory.
func TestHostile(t *testing.T) {
	for _, c := range []struct {
		name, src, want string
	}{
		{"empty object", `{}`, "x.json: no cases"},
		{"null", `null`, "x.json: no cases"},
		{"null cases", `{"cases":null}`, "x.json: no cases"},
		{"no cases", `{"cases":[]}`, "x.json: no cases"},
		{"syntax", "{\"cases\":\n  [1,}", "x.json:2:6: invalid character '}'"},
		{"type", "{\"cases\":\n [{\"id\": 5}]}", "x.json:2:10: json: cannot unmarshal number"},
		{"negative", "{\"cases\": [{\"setup\": {\"qp_num\": -1}}]}", "x.json:1:33:"},
		{"trailing", "{\"cases\":[]}\n\n  {}", "x.json:3:3: data after the JSON document"},
		{"truncated", `{"cases":[`, "x.json:1:11: unexpected EOF"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := Read("x.json", strings.NewReader(c.src))
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("got %v, want %q", err, c.want)
			}
		})
	}
}

// TestTooLarge: a read stops at MaxFileSize (replay /dev/zero).
func TestTooLarge(t *testing.T) {
	r := &counter{r: zeros{}}
	_, err := Read("/dev/zero", r)
	if err == nil || !strings.Contains(err.Error(), "larger than") {
		t.Fatalf("got %v", err)
	}
	if r.n > MaxFileSize+64<<10 {
		t.Errorf("read %d bytes", r.n)
	}
}

type zeros struct{}

func (zeros) Read(p []byte) (int, error) { clear(p); return len(p), nil }

type counter struct {
	r io.Reader
	n int
}

func (c *counter) Read(p []byte) (int, error) { n, err := c.r.Read(p); c.n += n; return n, err }

// TestCaseChecks: a case that compares nothing, or whose sizes, slots or
// call indexes are out of range, is refused with its id and field.
func TestCaseChecks(t *testing.T) {
	for _, c := range []struct {
		name   string
		change func(c map[string]any)
		want   string
	}{
		{"as is", func(map[string]any) {}, ""},
		{"null batches", func(c map[string]any) { get(c, "result").(map[string]any)["batches"] = nil },
			`case "rc_rdma_write_sge_signaled": result.batches: none`},
		{"no calls", func(c map[string]any) { c["calls"] = []any{} }, "calls: none"},
		{"no id", func(c map[string]any) { delete(c, "id") }, "case 0: id: missing"},
		{"call index", func(c map[string]any) { get(c, "result", "batches", 0).(map[string]any)["calls"] = []any{0, 99} },
			"result.batches[0].calls: [0, 99]: not calls of the case"},
		{"negative call index", func(c map[string]any) { get(c, "result", "batches", 0).(map[string]any)["calls"] = []any{-1, 3} },
			"result.batches[0].calls: [-1, 3]"},
		{"batch start", func(c map[string]any) { get(c, "result", "batches", 0).(map[string]any)["calls"] = []any{1, 4} },
			"call 1 is ibv_qp_ex.wr_id, not ibv_wr_start"},
		{"slot", func(c map[string]any) {
			get(c, "result", "batches", 0, "wqes", 0).(map[string]any)["slots"] = []any{64}
		},
			"result.batches[0].wqes[0].slots: slot 64 is outside the ring of 64 WQEBBs"},
		{"hex length", func(c map[string]any) { get(c, "result", "batches", 0, "wqes", 0).(map[string]any)["hex"] = "00" },
			"result.batches[0].wqes[0].hex: 2 hex digits, want 128"},
		{"hex digit", func(c map[string]any) {
			w := get(c, "result", "batches", 0, "wqes", 0).(map[string]any)
			w["hex"] = "0z" + w["hex"].(string)[2:]
		}, "result.batches[0].wqes[0].hex: not a hex digit at offset 1"},
		{"unwritten", func(c map[string]any) {
			get(c, "result", "batches", 0, "wqes", 0).(map[string]any)["unwritten_ranges"] = []any{[]any{60, 65}}
		}, "unwritten range [60, 65) outside its 64 bytes"},
		{"huge ring", func(c map[string]any) { get(c, "setup", "sq").(map[string]any)["wqebb_count"] = 1 << 24 },
			"setup.sq.wqebb_count: 16777216; a ring is a power of two of at most 65536 WQEBBs"},
		{"odd ring", func(c map[string]any) { get(c, "setup", "sq").(map[string]any)["wqebb_count"] = 48 }, "setup.sq.wqebb_count: 48"},
		{"max_sq_desc_sz", func(c map[string]any) { get(c, "setup", "device_context").(map[string]any)["max_sq_desc_sz"] = 256 },
			"setup.sq.max_wqe_size: 320, more than device_context.max_sq_desc_sz 256"},
		{"max_post", func(c map[string]any) { get(c, "setup", "sq").(map[string]any)["max_post"] = 65 }, "setup.sq.max_post: 65"},
		{"outstanding", func(c map[string]any) { get(c, "setup", "sq").(map[string]any)["initial_head"] = 13 },
			"setup.sq.initial_head 13, initial_tail 0: more work requests outstanding than max_post 12"},
		{"BlueFlame", func(c map[string]any) { get(c, "setup", "bf").(map[string]any)["buf_size"] = 1 << 20 }, "setup.bf: uuarn 1, buf_size 1048576"},
		{"BlueFlame write", func(c map[string]any) {
			get(c, "result", "batches", 0, "bf_writes", 0).(map[string]any)["offset"] = 510
		},
			"result.batches[0].bf_writes[0]: 8 bytes at offset 510: outside the 512-byte BlueFlame window"},
		{"mkey entries", func(c map[string]any) {
			get(c, "setup").(map[string]any)["mkeys"] = []any{map[string]any{"name": "m", "max_entries": 1 << 20}}
		}, "setup.mkeys: m: max_entries 1048576"},
		{"qp type", func(c map[string]any) { get(c, "setup").(map[string]any)["qp_type"] = "UD" }, `setup.qp_type: "UD"`},
		{"newest result", func(c map[string]any) { c["result_at_newest_commit"] = map[string]any{} }, "result_at_newest_commit.batches: none"},
		{"mw name", func(c map[string]any) { get(c, "setup").(map[string]any)["mws"] = []any{map[string]any{"rkey": 1}} }, "setup.mws[0].name"},
	} {
		t.Run(c.name, func(t *testing.T) {
			k := baseCase(t)
			c.change(k)
			b, _ := json.Marshal(map[string]any{"cases": []any{k}})
			_, err := Read("x.json", bytes.NewReader(b))
			switch {
			case c.want == "" && err != nil:
				t.Errorf("refused: %v", err)
			case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
				t.Errorf("got %v, want %q", err, c.want)
			}
		})
	}
}
