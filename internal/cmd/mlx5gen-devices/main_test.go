package main

import (
	"bytes"
	"errors"
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
