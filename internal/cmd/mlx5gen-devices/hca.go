package main

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/mlx5gen/mlx5gen/runtime/device"
)

// hcaCaps opens the device called name and reads its QUERY_HCA_CAP
// capabilities (a variable so that the table's test need not open one).
var hcaCaps = func(name string) (device.HCACaps, error) {
	c, err := device.Open(name)
	if err != nil {
		return device.HCACaps{}, err
	}
	defer c.Close()
	return c.HCACaps()
}

// hcaTable prints what each device's QUERY_HCA_CAP pages say, one line
// per device; it returns false when a device's pages could not be read
// for another reason than a device without DEVX.
func hcaTable(w io.Writer, infos []device.Info, query func(string) (device.HCACaps, error)) bool {
	ok := true
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "DEVICE\tQUERY_HCA_CAP: BLOCK SIGNATURE\tAES-XTS\tDEK")
	for _, in := range infos {
		if in.Err != nil {
			continue // the first table said why
		}
		h, err := query(in.Name)
		switch {
		case errors.Is(err, device.ErrNoDevx):
			fmt.Fprintf(tw, "%s\tno DEVX: %v\n", in.Name, err)
			continue
		case err != nil:
			fmt.Fprintf(tw, "%s\tcannot read: %v\n", in.Name, err)
			ok = false
			continue
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", in.Name, hcaSignature(h), hcaXTS(h), hcaDEK(h))
	}
	tw.Flush()
	return ok
}

func hcaSignature(h device.HCACaps) string {
	if !h.BlockSignature {
		return "no"
	}
	s := []string{"t10dif", "crc32"}
	if h.SigCRC32C {
		s = append(s, "crc32c")
	}
	if h.SigCRC64XP10 {
		s = append(s, "crc64-xp10")
	}
	if h.SigBlock4048 {
		s = append(s, "4048-byte blocks")
	}
	return strings.Join(s, ",")
}

func hcaXTS(h device.HCACaps) string {
	var e []string
	if h.AESXTSSingleBlock {
		e = append(e, "single-block")
	}
	if h.AESXTSMultiBlock {
		e = append(e, "multi-block")
	}
	if len(e) == 0 {
		return "no"
	}
	return strings.Join(e, ",")
}

func hcaDEK(h device.HCACaps) string {
	switch {
	case !h.DEKObjects:
		return "no"
	case !h.CryptoPage:
		return "yes (no crypto page)"
	case h.WrappedImportOnly:
		return fmt.Sprintf("wrapped keys only (crypto login), up to 2^%d", h.LogMaxNumDEKs)
	}
	s := fmt.Sprintf("plaintext keys, up to 2^%d", h.LogMaxNumDEKs)
	if h.FailedSelftests != 0 {
		s += fmt.Sprintf(", failed self-tests %#x", h.FailedSelftests)
	}
	return s
}
