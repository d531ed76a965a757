package main

import (
	"encoding/json"
	"math"
)

// jsonRow is one row of -json: the figures of the Markdown table as
// numbers (null where the table has "—"), keyed by the row's stable key.
type jsonRow struct {
	Key         string      `json:"key"`
	Path        string      `json:"path"`
	Reference   string      `json:"reference"` // "" for rows quoted in absolute time
	Unit        string      `json:"unit"`      // of ref_ns and ns: ns/op, or ns/config for the mkey rows
	RefNs       *float64    `json:"ref_ns"`
	Ns          *float64    `json:"ns"`
	Ratio       *float64    `json:"ratio"` // median of the per-round ns/ref_ns
	Range       *[2]float64 `json:"range"` // lowest and highest per-round ratio
	Rounds      int         `json:"rounds"`
	Allocs      *float64    `json:"allocs_per_op"`
	Target      string      `json:"target"`
	NotMeasured string      `json:"not_measured,omitempty"`
}

func num(x float64) *float64 {
	if math.IsNaN(x) {
		return nil
	}
	return &x
}

// jsonRows is the -json output: an array with one object per row.
func jsonRows(rs []row, r *runner) ([]byte, error) {
	out := []jsonRow{}
	for _, x := range rs {
		j := jsonRow{Key: x.Key, Path: x.Path, Unit: x.Unit, Target: x.Target, NotMeasured: x.NotMeasured}
		if x.NotMeasured == "" {
			st := summarise(r.refs[x.Key], r.vals[x.Key], r.allocs[x.Key])
			j.Ns, j.Rounds = num(st.Val), st.Rounds
			if len(r.allocs[x.Key]) > 0 {
				j.Allocs = num(st.Allocs)
			}
			if x.Ref != "" {
				j.Reference = refName(x, r) + " (" + x.Ref + ")"
				j.RefNs, j.Ratio = num(st.Ref), num(st.Ratio)
				if !math.IsNaN(st.Min) {
					j.Range = &[2]float64{st.Min, st.Max}
				}
			}
		} else if x.Lib {
			j.Reference = "libmlx5: " + x.RefWhy
		}
		out = append(out, j)
	}
	b, err := json.MarshalIndent(out, "", "  ")
	return append(b, '\n'), err
}
