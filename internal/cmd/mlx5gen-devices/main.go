// Command mlx5gen-devices is "mlx5gen devices": it lists the machine's
// RDMA devices with their mlx5 capabilities (signature offload, crypto,
// DCI streams, the MMO memcpy engine), opened through runtime/device's
// hardware backend, and then what each device's QUERY_HCA_CAP pages say
// of block signatures, AES-XTS and DEKs: the capabilities runtime/device
// checks before it creates a signature or crypto mkey or a DEK by DEVX
// command (device.Context.HCACaps). With -sim it lists the simulator's
// devices instead, whose DEVX commands the simulator answers.
//
//	mlx5gen-devices [-sim]
//
// It is a program of its own because it runs the runtime and the cgo
// bindings, which the generator (cmd/mlx5gen) must build without;
// cmd/mlx5gen runs it for its devices command. Errors start with
// "mlx5gen:". The exit status is 0 when devices are listed, 3 when the
// machine has no RDMA device (the message says why: on Linux without RDMA
// hardware, no /sys/class/infiniband), 2 for a usage error and 1 for any
// other failure (built without cgo, a query that failed; a device opened
// without DEVX is listed as such, not a failure).
package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"

	"github.com/mlx5gen/mlx5gen/runtime/device"
	_ "github.com/mlx5gen/mlx5gen/runtime/device/verbs"
	"github.com/mlx5gen/mlx5gen/runtime/sim"
)

// Exit statuses.
const (
	exitOK       = 0
	exitFail     = 1
	exitUsage    = 2
	exitNoDevice = 3
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

const usage = `usage: mlx5gen devices [-sim]

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

func run(args []string, stdout, stderr io.Writer) int {
	prefix := ""
	if len(args) > 0 {
		switch args[0] {
		case "-h", "-help", "--help":
			fmt.Fprint(stderr, usage)
			return exitOK
		case "-sim":
			prefix = sim.Prefix
			args = args[1:]
		}
	}
	if len(args) > 0 {
		fmt.Fprintf(stderr, "mlx5gen: devices takes no arguments but -sim (got %q)\n%s", args, usage)
		return exitUsage
	}
	infos, err := device.List(prefix)
	switch {
	case errors.Is(err, device.ErrNoDevice):
		fmt.Fprintf(stderr, "mlx5gen: %v\n", err) // the error says "no RDMA device" and why
		return exitNoDevice
	case err != nil:
		fmt.Fprintf(stderr, "mlx5gen: devices: %v\n", err)
		return exitFail
	}
	table(stdout, infos)
	st := exitOK
	for _, in := range infos {
		if in.Err != nil {
			st = exitFail
		}
	}
	fmt.Fprintln(stdout)
	if !hcaTable(stdout, infos, hcaCaps) {
		st = exitFail
	}
	return st
}

// table prints one line per device.
func table(w io.Writer, infos []device.Info) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "DEVICE\tGUID\tSIGNATURE\tCRYPTO\tDCI STREAMS\tMMO MEMCPY")
	for _, in := range infos {
		if in.Err != nil {
			fmt.Fprintf(tw, "%s\t%#016x\tcannot open: %v\n", in.Name, in.GUID, in.Err)
			continue
		}
		c := in.Caps
		fmt.Fprintf(tw, "%s\t%#016x\t%s\t%s\t%s\t%s\n", in.Name, in.GUID, signature(c), crypto(c), streams(c), mmo(c))
	}
	tw.Flush()
}

func signature(c device.Caps) string {
	if !c.Signature {
		return "no"
	}
	return strings.ToLower(strings.ReplaceAll(c.SigProt.String(), "MLX5DV_SIG_PROT_CAP_", ""))
}

func crypto(c device.Caps) string {
	if !c.Crypto {
		return "no"
	}
	var e []string
	if c.CryptoSingleBlock {
		e = append(e, "single-block")
	}
	if c.CryptoMultiBlock {
		e = append(e, "multi-block")
	}
	if len(e) == 0 {
		return "aes-xts"
	}
	return "aes-xts " + strings.Join(e, ",")
}

func streams(c device.Caps) string {
	if !c.DCIStreams {
		return "no"
	}
	return fmt.Sprintf("2^%d (2^%d errored)", c.MaxLogNumConcurent, c.MaxLogNumErrored)
}

func mmo(c device.Caps) string {
	if c.MaxMemcpy == 0 {
		return "no"
	}
	return fmt.Sprintf("%d bytes", c.MaxMemcpy)
}
