// Package mkey is the simulated device's indirect mkeys: their
// configuration by UMR work requests (mlx5dv_wr_mkey_configure(3) and its
// setters, mlx5dv_wr_mr_list/interleaved, local invalidate) read from the
// WQE bytes runtime/sq writes, SET_PSV, DEKs, and transfers through an
// mkey: list (KLM) and interleaved (repeat block) layouts resolved down
// to the engine's registered memory, the block-signature engine of
// mlx5dv_wr_set_mkey_sig_block(3) and AES-XTS of
// mlx5dv_wr_set_mkey_crypto(3), in the order its table gives. The
// arithmetic is runtime/sim/sigblock's.
//
// The engine (runtime/sim) owns a Table per device and calls it from one
// goroutine: a Table keeps scratch buffers and is not safe for concurrent
// use. Refinements of the contract's interface:
//   - Create keeps its (lkey, error) result; PSVs returns the memory and
//     wire PSV indexes a signature mkey was created with (what
//     mlx5dv_create_mkey reports and sq.Mkey's MemPSV/WirePSV take).
//   - mkey keys have bit 31 set (index 0x800000 and up): the engine's MR
//     and MW keys must stay below 0x80000000. Key 0x400 must never be an
//     MR key either: a translation whose first entry names it is an
//     interleaved layout's repeat block (its op field).
//   - Addresses through an mkey are zero-based offsets in its memory
//     domain (the man page's "zero-based mode"); Gather's n counts memory
//     bytes. WireLen and MemLen convert lengths between the domains for a
//     signature mkey (an RDMA READ asks for wire bytes).
//   - Faults carry Remote and the Kind the engine maps to a completion
//     syndrome; a descriptive error that is not a *Fault (a malformed
//     WQE, a crypto or signature configuration the device cannot run) is
//     a local QP operation error.
//   - SigErr has the fields of the MLX5_CQE_SIG_ERR CQE; PutCQE writes it.
//   - CryptoMultiBlock says the device's AES-XTS engine is the
//     multi-block one, whose BSF holds the tweak byte-reversed.
package mkey
