package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"

	mlx "github.com/mlx5gen/mlx5gen/generated/mlx5dv"
	"github.com/mlx5gen/mlx5gen/runtime/device"
)

// TestNoDevice: without RDMA hardware the command says there is none and
// why, with status 3; with hardware it lists the devices.
func TestNoDevice(t *testing.T) {
	var stdout, stderr bytes.Buffer
	st := run(nil, &stdout, &stderr)
	if es, _ := os.ReadDir("/sys/class/infiniband"); len(es) > 0 {
		if st != exitOK || !strings.HasPrefix(stdout.String(), "DEVICE") {
			t.Fatalf("with %d devices: status %d\n%s%s", len(es), st, stdout.String(), stderr.String())
		}
		return
	}
	if st == exitFail && strings.Contains(stderr.String(), "without cgo") {
		t.Fatalf("built without cgo: %s", stderr.String())
	}
	if st != exitNoDevice || stdout.Len() != 0 {
		t.Fatalf("status %d, stdout %q; want %d and nothing", st, stdout.String(), exitNoDevice)
	}
	if !regexp.MustCompile(`^mlx5gen: .*no RDMA device.*/sys/class/infiniband`).MatchString(stderr.String()) {
		t.Errorf("stderr %q does not say there is no RDMA device and why", stderr.String())
	}
}

func TestUsage(t *testing.T) {
	var stdout, stderr bytes.Buffer
	if st := run([]string{"mlx5_0"}, &stdout, &stderr); st != exitUsage || !strings.Contains(stderr.String(), "usage: mlx5gen devices") {
		t.Errorf("an argument: status %d, stderr %q", st, stderr.String())
	}
	stderr.Reset()
	if st := run([]string{"-h"}, &stdout, &stderr); st != exitOK || !strings.Contains(stderr.String(), "Exit status") {
		t.Errorf("-h: status %d, stderr %q", st, stderr.String())
	}
}

// TestTable: each capability is shown by what the device reports.
func TestTable(t *testing.T) {
	var b bytes.Buffer
	table(&b, []device.Info{
		{Name: "mlx5_0", GUID: 0x1122, Caps: device.Caps{Signature: true, SigProt: mlx.MLX5DV_SIG_PROT_CAP_T10DIF | mlx.MLX5DV_SIG_PROT_CAP_CRC,
			Crypto: true, CryptoMultiBlock: true, DCIStreams: true, MaxLogNumConcurent: 4, MaxLogNumErrored: 2, MaxMemcpy: 1 << 20}},
		{Name: "mlx5_1"},
		{Name: "mlx5_2", Err: errors.New("EPERM")},
	})
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	want := []*regexp.Regexp{
		regexp.MustCompile(`^DEVICE +GUID +SIGNATURE +CRYPTO +DCI STREAMS +MMO MEMCPY$`),
		regexp.MustCompile(`^mlx5_0 +0x0000000000001122 +t10dif\|crc +aes-xts multi-block +2\^4 \(2\^2 errored\) +1048576 bytes$`),
		regexp.MustCompile(`^mlx5_1 +0x0000000000000000 +no +no +no +no$`),
		regexp.MustCompile(`^mlx5_2 +0x0000000000000000 +cannot open: EPERM`),
	}
	if len(lines) != len(want) {
		t.Fatalf("%d lines:\n%s", len(lines), b.String())
	}
	for i, re := range want {
		if !re.MatchString(lines[i]) {
			t.Errorf("line %d %q does not match %s", i, lines[i], re)
		}
	}
}

// TestHCATable: each QUERY_HCA_CAP capability is shown as the device
// reports it; a device without DEVX is listed as such, a failed query
// fails the command.
func TestHCATable(t *testing.T) {
	caps := map[string]device.HCACaps{
		"full": {BlockSignature: true, SigCRC32C: true, SigBlock4048: true, AESXTSSingleBlock: true, AESXTSMultiBlock: true,
			DEKObjects: true, CryptoPage: true, LogMaxNumDEKs: 20},
		"wrapped": {AESXTSSingleBlock: true, DEKObjects: true, CryptoPage: true, WrappedImportOnly: true, LogMaxNumDEKs: 8},
		"bare":    {},
	}
	query := func(name string) (device.HCACaps, error) {
		switch name {
		case "nodevx":
			return device.HCACaps{}, fmt.Errorf("open: %w", device.ErrNoDevx)
		case "broken":
			return device.HCACaps{}, errors.New("BAD_OP_ERR")
		}
		return caps[name], nil
	}
	var b bytes.Buffer
	infos := []device.Info{{Name: "full"}, {Name: "wrapped"}, {Name: "bare"}, {Name: "nodevx"}, {Name: "gone", Err: errors.New("EPERM")}}
	if !hcaTable(&b, infos, query) {
		t.Errorf("reported a failure:\n%s", b.String())
	}
	want := []*regexp.Regexp{
		regexp.MustCompile(`^DEVICE +QUERY_HCA_CAP: BLOCK SIGNATURE +AES-XTS +DEK$`),
		regexp.MustCompile(`^full +t10dif,crc32,crc32c,4048-byte blocks +single-block,multi-block +plaintext keys, up to 2\^20$`),
		regexp.MustCompile(`^wrapped +no +single-block +wrapped keys only \(crypto login\), up to 2\^8$`),
		regexp.MustCompile(`^bare +no +no +no$`),
		regexp.MustCompile(`^nodevx +no DEVX: open: no DEVX`),
	}
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	if len(lines) != len(want) {
		t.Fatalf("%d lines:\n%s", len(lines), b.String())
	}
	for i, re := range want {
		if !re.MatchString(lines[i]) {
			t.Errorf("line %d %q does not match %s", i, lines[i], re)
		}
	}
	if hcaTable(&b, []device.Info{{Name: "broken"}}, query) {
		t.Error("a failed query did not fail the table")
	}
}

// TestSim: -sim lists the simulator's device with the capabilities its
// QUERY_HCA_CAP pages report, read through DEVX as on hardware.
func TestSim(t *testing.T) {
	var stdout, stderr bytes.Buffer
	if st := run([]string{"-sim"}, &stdout, &stderr); st != exitOK {
		t.Fatalf("status %d\n%s%s", st, stdout.String(), stderr.String())
	}
	for _, re := range []*regexp.Regexp{
		regexp.MustCompile(`(?m)^sim:\S+ +0x5eed\S* +t10dif\|crc +aes-xts`),
		regexp.MustCompile(`(?m)^sim:\S+ +t10dif,crc32,crc32c,crc64-xp10,4048-byte blocks +single-block,multi-block +plaintext keys, up to 2\^16$`),
	} {
		if !re.MatchString(stdout.String()) {
			t.Errorf("stdout does not match %s:\n%s", re, stdout.String())
		}
	}
	if st := run([]string{"-sim", "x"}, &stdout, &stderr); st != exitUsage {
		t.Errorf("-sim x: status %d", st)
	}
}
