//go:build amd64 && !race

package gate

// publish is a release store. On amd64 every store is one (TSO), and the
// compiler keeps stores in program order; a plain MOV, not XCHG, which is
// what sync/atomic's Store costs.
func publish(p *uint32, v uint32) { *p = v }
