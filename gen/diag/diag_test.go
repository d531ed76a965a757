package diag

import (
	"errors"
	"fmt"
	"testing"
)

func TestListReadsOneProblemPerLine(t *testing.T) {
	var l List
	l.Add(Pos{File: "spec/api/x.yaml", Line: 3, Col: 5}, "rule %s: bad", "a.b")
	l.Add(Pos{}, "no position")
	want := "spec/api/x.yaml:3:5: rule a.b: bad\n-: no position"
	if got := l.Error(); got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	var as List
	if !errors.As(fmt.Errorf("wrapped: %w", l), &as) || len(as) != 2 {
		t.Errorf("errors.As does not find the list: %v", as)
	}
}
