package main

// A row of the table: the measured side (Pkg's benchmark Bench, metric
// Unit) against a reference in the same process and round (Ref, ns/op), or
// no reference (Ref "") for rows quoted in absolute time. NotMeasured rows
// have no benchmark; the table says why instead of a figure.
type row struct {
	Key         string // for -rows
	Path        string // what the table calls it
	Pkg         string // package of the benchmark, "process" for a whole run
	Bench, Unit string
	Ref, RefWhy string
	Target      string
	NotMeasured string
}

const (
	verify  = "./gen/verify/"
	command = "./cmd/mlx5gen/"
	cHelper = "BenchmarkPostRDMAWrite/C"
	cWhy    = "C helper loop"
	noLib   = "needs libmlx5's own builders, which the project does not build"
)

var rows = []row{
	{Key: "post", Path: "RDMA WRITE + SGE, per-call API, Complete every 32", Pkg: verify,
		Bench: "BenchmarkPostRDMAWrite/Go", Unit: "ns/op", Ref: cHelper, RefWhy: cWhy, Target: "≤ 1.9×"},
	{Key: "post-onecall", Path: "the same, one-call form (RDMAWriteSGE: builder and SGE in one call)", Pkg: verify,
		Bench: "BenchmarkPostRDMAWrite/GoOneCall", Unit: "ns/op", Ref: cHelper, RefWhy: cWhy},
	{Key: "post-libmlx5", Path: "the same, libmlx5's ibv_wr_rdma_write + ibv_wr_set_sge", NotMeasured: noLib},
	{Key: "doorbell-each", Path: "the same, one work request per batch (doorbell each)", Pkg: verify,
		Bench: "BenchmarkPostRDMAWrite/GoDoorbellEach", Unit: "ns/op", Ref: cHelper, RefWhy: cWhy, Target: "≤ 4×"},
	{Key: "doorbell-each-c", Path: "the same against the C helper loop with a doorbell each (post_send_db's fences)", Pkg: verify,
		Bench: "BenchmarkPostRDMAWrite/GoDoorbellEach", Unit: "ns/op", Ref: "BenchmarkPostRDMAWrite/CDoorbellEach", RefWhy: "C helper loop, a doorbell each"},
	{Key: "burst", Path: "burst / prepared form (RDMAWriteBurst of 32)", Pkg: verify,
		Bench: "BenchmarkPostRDMAWrite/GoBurst", Unit: "ns/op", Ref: cHelper, RefWhy: cWhy, Target: "≤ 1.2×"},
	{Key: "encoders", Path: "encoders alone (BenchmarkRDMAWriteWQE)", Pkg: verify,
		Bench: "BenchmarkRDMAWriteWQE/Go", Unit: "ns/op", Ref: "BenchmarkRDMAWriteWQE/C", RefWhy: "C, mlx5dv.h helpers", Target: "≤ 1.1×"},
	{Key: "mkey", Path: "mkey configure, the four calls, a doorbell each (ns per configuration)", Pkg: verify,
		Bench: "BenchmarkMkeyConfigure/batch1", Unit: "ns/config", Ref: cHelper, RefWhy: cWhy, Target: "≤ 20 ns"},
	{Key: "mkey8", Path: "the same, 8 per doorbell", Pkg: verify,
		Bench: "BenchmarkMkeyConfigure/batch8", Unit: "ns/config", Ref: cHelper, RefWhy: cWhy, Target: "≤ 20 ns"},
	{Key: "mkey-libmlx5", Path: "mkey configure with libmlx5's mlx5dv_wr_mkey_configure etc.", NotMeasured: noLib},
	{Key: "template", Path: "mkey configure through a template, a doorbell each", Pkg: verify,
		Bench: "BenchmarkMkeyConfigure/template-batch1", Unit: "ns/config", Ref: cHelper, RefWhy: cWhy, Target: "≤ 12 ns"},
	{Key: "template8", Path: "the same, 8 per doorbell", Pkg: verify,
		Bench: "BenchmarkMkeyConfigure/template-batch8", Unit: "ns/config", Ref: cHelper, RefWhy: cWhy, Target: "≤ 12 ns"},
	{Key: "poll", Path: "poll one CQE in batches of 16 (ns per batch)", Pkg: verify,
		Bench: "BenchmarkPollCQ/Go", Unit: "ns/op", Ref: "BenchmarkPollCQ/C-one-barrier", RefWhy: "C loop, one barrier per batch", Target: "≤ 1.3×"},
	{Key: "poll-libmlx5-order", Path: "the same against a C loop in libmlx5's order", Pkg: verify,
		Bench: "BenchmarkPollCQ/Go", Unit: "ns/op", Ref: "BenchmarkPollCQ/C", RefWhy: "C loop, a barrier per CQE"},
	{Key: "generate", Path: "mlx5gen generate, 44.0 header, in process (BenchmarkGenerate)", Pkg: command,
		Bench: "BenchmarkGenerate", Unit: "ns/op"},
	{Key: "generate-cold", Path: "mlx5gen generate, 44.0 header, whole process, cold (model cache miss)", Pkg: "process",
		Bench: "mlx5gen generate", Unit: "ns/op", Target: "≤ 0.3 s"},
	{Key: "generate-warm", Path: "the same, nothing changed (output cache hit, tree up to date)", Pkg: "process",
		Bench: "mlx5gen generate warm", Unit: "ns/op", Target: "≤ 0.08 s"},
}
