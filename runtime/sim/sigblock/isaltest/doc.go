// Package isaltest cross-checks sigblock's T10-DIF CRC16, CRC32C and CRC32
// against Intel's ISA-L (Debian's libisal-dev), an implementation nobody
// on this project wrote. The cgo binding and its test build only with the
// isal tag (scripts/test.sh runs them: go test -tags isal
// ./runtime/sim/sigblock/isaltest); without it the package is this comment,
// so the runtime stays pure Go.
package isaltest
