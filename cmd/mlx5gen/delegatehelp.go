package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
)

// The usages of the programs mlx5gen runs, printed by mlx5gen itself so
// that "replay -h" and "devices -h" work (status 0) where the program is
// not found. TestScripts (honest.txtar) holds each to the program's own.

const replayUsage = "usage: mlx5gen replay [-v] FILE.json...\n\n" +
	"Replays reference vectors (testdata/vectors) through mlx5gen's send-queue writer and\n" +
	"compares every WQE byte, the producer index, the doorbell record and the BlueFlame writes;\n" +
	"CQE vectors (testdata/cqe-vectors) through the CQ poller, comparing every work completion\n" +
	"field, the consumer index, the doorbell record and the queues' bookkeeping.\n"

const devicesUsage = `usage: mlx5gen devices [-sim]

Lists the RDMA devices with their mlx5 capabilities: signature offload (the
protection types), crypto (AES-XTS engines), DCI streams (log2 of the
concurrent and errored streams a DCI can have) and MMO (the largest DMA
memcpy); then, for each device, what its QUERY_HCA_CAP pages say (read
through DEVX, as runtime/device reads them before creating a signature or
crypto mkey or a DEK): block signature (and the optional CRC types and
4048-byte blocks), the AES-XTS engines, DEK objects and how keys are
imported. -sim lists the simulator's devices instead of the hardware's.
Exit status: 0 devices listed, 3 no RDMA device (and why), 1 failure,
2 usage error.
`

// replayHelp prints replay's usage if its flags ask for it (-h, -help,
// --help before the files), as mlx5gen-replay would.
func replayHelp(args []string, stderr io.Writer) bool {
	fs := flag.NewFlagSet("replay", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	fs.Bool("v", false, "after ok, print the documented divergence a case was held to")
	if !errors.Is(fs.Parse(args), flag.ErrHelp) {
		return false
	}
	fmt.Fprint(stderr, replayUsage)
	fs.SetOutput(stderr)
	fs.PrintDefaults()
	return true
}

// devicesHelp prints devices' usage if its first argument asks for it.
func devicesHelp(args []string, stderr io.Writer) bool {
	if len(args) == 0 || args[0] != "-h" && args[0] != "-help" && args[0] != "--help" {
		return false
	}
	fmt.Fprint(stderr, devicesUsage)
	return true
}
