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
// use. A transfer allocates nothing in steady state.
//
// How the engine uses it:
//   - Keys: mkey keys have bit 31 set (index 0x800000 and up), so the
//     engine's MR and MW keys must stay below 0x80000000; Is tells an
//     mkey's key (its current tag included). Key 0x400 must never be an MR
//     key either: a translation whose first entry names it is an
//     interleaved layout's repeat block (its op field). [ledger: mr-keys]
//   - WQEs: a UMR whose control segment's immediate is an mkey key (an
//     mkey configuration or a local invalidate of an mkey) goes to
//     ExecUMR; a bind-MW UMR names an MW and stays with the engine.
//     SET_PSV goes to ExecSetPSV. Both take the WQE from its control
//     segment, ds*16 bytes unwrapped from the ring. A *WQEError is a
//     malformed WQE (a local QP operation error CQE); a *Fault a refused
//     access.
//   - Transfers: Gather (SEND, WRITE source, READ responder) and Scatter
//     (RECV, WRITE target, READ response) take zero-based addresses and
//     lengths that count as the hardware counts them: a remote span (an
//     RDMA READ's or WRITE's address and length) wire bytes; a local SGE
//     memory bytes when the wire domain has a signature, wire (data)
//     bytes when it has none (see wireUnits for the evidence). Gather
//     returns the wire bytes, Scatter takes them. SpanWire gives the wire
//     bytes a span carries: what a receive SGE holds, what an RDMA READ's
//     local SGEs ask for. A transfer through a signature mkey is whole
//     blocks of a whole message (the engine does not hand over packets);
//     a span that is not whole blocks is a bounds fault.
//     [ledger: sig-whole-blocks, whole-messages]
//   - Faults: Fault.Kind and Remote pick the completion syndrome (local
//     protection or length, remote access). A failed signature check is
//     not a fault: the data moves, and SigError returns the error, whose
//     PutCQE writes the MLX5_CQE_SIG_ERR CQE runtime/cq decodes. [ledger: syndrome-mkey, sig-error-moves-data]
//
// Refinements of the contract's interface: Create keeps (lkey, error) and
// PSVs returns a signature mkey's memory and wire PSV indexes (what
// mlx5dv_create_mkey reports, sq.Mkey's MemPSV/WirePSV); CreateDEK takes
// the key (key1 then key2) and an optional 8-byte keytag; RemoteInvalidate
// checks REMOTE_INVALIDATE; CryptoMultiBlock says the device's AES-XTS
// engine is the multi-block one, whose BSF holds the tweak byte-reversed. [ledger: crypto-engine, xts-tweak-byte-order]
//
// Semantics chosen where the man pages leave room: the BSF gives each
// domain's type, block size and flags, and the PSV's transient signature,
// once SET_PSV wrote it, the guard or CRC seed and the first application
// and reference tags. Each transfer (each SGE or remote span through an
// mkey) numbers its blocks and XTS data units from its own first one,
// which takes the configured reference tag and the initial tweak
// (mlx5dv_wr_set_mkey_sig_block(3): the initial ref tag is "the value of
// the first block to be transmitted"; mlx5dv_wr_set_mkey_crypto(3): the
// tweak is "the LBA of the first block in the message"); its offset in
// the mkey must still be whole blocks and units. Every failed part of a
// block (guard, application tag, reference tag) goes into the
// signature-error CQE and the poller picks one; the first failed block of
// a transfer is kept until SigError takes it, and its offset is in the
// checked domain from the transfer's start. CRC fields are little-endian,
// T10-DIF fields big-endian (runtime/sim/sigblock). XTS data units take
// the 128-bit initial tweak plus their number, carried past 64 bits.
// [ledger: psv-seeds, sig-ref-tag-numbering, xts-tweak-numbering, sig-failure-report, sig-error-offset, crc-byte-order, t10dif-byte-order, xts-tweak-128-bit-carry]
package mkey
