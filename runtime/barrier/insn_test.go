//go:build amd64

package barrier

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// The instructions (their encodings, as go tool objdump prints them) of
// each barrier per architecture, as rdma-core's util/udma_barrier.h has
// them; a compiler barrier is no instruction at all.
var wantInsns = map[string]map[string][]string{
	"amd64": {
		"UDMAToDeviceBarrier":   nil,
		"UDMAFromDeviceBarrier": {"0faee8"}, // lfence
		"MMIOWCStart":           {"0faef8"}, // sfence
		"MMIOFlushWrites":       {"0faef8"}, // sfence
		// The record, sfence, the register, sfence (its four arguments
		// loaded from the frame first).
		"Doorbell8": {"488b442408", "8b5c2410", "488b4c2418", "488b542420", "8918", "0faef8", "488911", "0faef8"},
	},
	"arm64": {
		"UDMAToDeviceBarrier":   {"d50332bf"}, // dmb oshst
		"UDMAFromDeviceBarrier": {"d50331bf"}, // dmb oshld
		"MMIOWCStart":           {"d50332bf"}, // dmb oshst
		"MMIOFlushWrites":       {"d5033e9f"}, // dsb st
	},
	"ppc64le": ppc64Insns,
	"ppc64":   ppc64Insns,
	"riscv64": {
		"UDMAToDeviceBarrier":   {"0550000f"}, // fence ow,ow
		"UDMAFromDeviceBarrier": {"0aa0000f"}, // fence ir,ir
		"MMIOWCStart":           {"0550000f"},
		"MMIOFlushWrites":       {"0550000f"},
	},
	"loong64": {
		"UDMAToDeviceBarrier":   {"38720000"}, // dbar 0
		"UDMAFromDeviceBarrier": {"38720000"},
		"MMIOWCStart":           {"38720000"},
		"MMIOFlushWrites":       {"38720000"},
	},
	"s390x": {
		"UDMAToDeviceBarrier":   nil,
		"UDMAFromDeviceBarrier": nil,
		"MMIOWCStart":           nil,
		"MMIOFlushWrites":       nil,
	},
}

var ppc64Insns = map[string][]string{
	"UDMAToDeviceBarrier":   {"7c0004ac"}, // sync
	"UDMAFromDeviceBarrier": {"7c2004ac"}, // lwsync
	"MMIOWCStart":           {"7c0004ac"}, // sync
	"MMIOFlushWrites":       {"7c0004ac"}, // sync
}

// TestBarrierInstructions assembles the files the build selects for every
// supported architecture (go list, go tool asm: no compiler, no linker)
// and reads the barriers' machine code back with go tool objdump. It runs
// on amd64 hosts (CI); TestBarriersRun executes the same code under qemu.
func TestBarrierInstructions(t *testing.T) {
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("the go command is needed: %v", err)
	}
	goroot, err := exec.Command(gobin, "env", "GOROOT").Output()
	if err != nil {
		t.Fatal(err)
	}
	include := filepath.Join(strings.TrimSpace(string(goroot)), "pkg", "include")
	dir := t.TempDir()
	text := regexp.MustCompile(`^TEXT .*\.(\w+)\(SB\)`)
	insn := regexp.MustCompile(`^\s+\S+\s+0x[0-9a-f]+\s+([0-9a-f]+)\s+(\S+)`)
	for arch, want := range wantInsns {
		env := append(os.Environ(), "GOARCH="+arch, "CGO_ENABLED=0")
		list := exec.Command(gobin, "list", "-f", "{{join .SFiles \" \"}}", ".")
		list.Env = env
		files, err := list.Output()
		if err != nil || len(strings.Fields(string(files))) != 1 {
			t.Fatalf("%s: go list: %v, assembly files %q", arch, err, files)
		}
		obj := filepath.Join(dir, arch+".o")
		asm := exec.Command(gobin, "tool", "asm", "-I", include, "-p", "barrier", "-o", obj, strings.TrimSpace(string(files)))
		asm.Env = env
		if out, err := asm.CombinedOutput(); err != nil {
			t.Fatalf("%s: go tool asm: %v\n%s", arch, err, out)
		}
		out, err := exec.Command(gobin, "tool", "objdump", obj).CombinedOutput()
		if err != nil {
			t.Fatalf("%s: objdump: %v\n%s", arch, err, out)
		}
		got := map[string][]string{}
		var fn string
		done := false
		for _, l := range strings.Split(string(out), "\n") {
			if m := text.FindStringSubmatch(l); m != nil {
				fn, done = m[1], false
				got[fn] = []string{}
				continue
			}
			m := insn.FindStringSubmatch(l)
			if fn == "" || done || m == nil {
				continue
			}
			if strings.HasPrefix(m[2], "RET") {
				done = true // the rest is padding
				continue
			}
			got[fn] = append(got[fn], m[1])
		}
		for name, w := range want {
			g, ok := got[name]
			if !ok {
				t.Errorf("%s: no %s in the assembly", arch, name)
				continue
			}
			if !slices.Equal(g, w) && !(len(g) == 0 && len(w) == 0) {
				t.Errorf("%s: %s is %v, want %v", arch, name, g, w)
			}
		}
	}
}
