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
	RefUnit     string // the reference's metric; "" is ns/op
	Lib         bool   // the reference is libmlx5's, built from -rdma-core-src
	PGO         bool   // measured in a binary built with its own profile (pgo.go)
}

const (
	verify  = "./gen/verify/"
	command = "./cmd/mlx5gen/"
	cHelper = "BenchmarkPostRDMAWrite/C"
	cWhy    = "C helper loop"
	lib     = libPkg
	libPost = "BenchmarkLibmlx5Post/"
	libDB   = "BenchmarkLibmlx5DoorbellEach/"
	libMkey = "BenchmarkLibmlx5Mkey/"
	mkWhy   = "mlx5dv_wr_mkey_configure + access + layout_list(4) + sig_block (T10-DIF)"
	wrWhy   = "ibv_wr_rdma_write + ibv_wr_set_sge, 32 per ibv_wr_start/complete"
)

// rows is the table: the libmlx5 rows of issue 26's targets each with a
// PGO twin.
var rows = withPGO(plainRows, "percall-libmlx5", "onecall-libmlx5", "burst-libmlx5",
	"doorbell-each-libmlx5-unlocked", "doorbell-each-post-libmlx5-unlocked", "mkey-libmlx5", "mkey8-libmlx5",
	"mkey-template-libmlx5", "mkey-template-post-libmlx5", "mkey-template8-libmlx5")

var plainRows = []row{
	{Key: "post", Path: "RDMA WRITE + SGE, per-call API, Complete every 32", Pkg: verify,
		Bench: "BenchmarkPostRDMAWrite/Go", Unit: "ns/op", Ref: cHelper, RefWhy: cWhy, Target: "≤ 1.9×"},
	{Key: "post-onecall", Path: "the same, one-call form (RDMAWriteSGE: builder and SGE in one call)", Pkg: verify,
		Bench: "BenchmarkPostRDMAWrite/GoOneCall", Unit: "ns/op", Ref: cHelper, RefWhy: cWhy},
	{Key: "percall-libmlx5", Path: "RDMA WRITE + SGE, per-call API, 32 per Start/Complete, against libmlx5", Pkg: lib, Lib: true,
		Bench: libPost + "Go", Unit: "ns/op", Ref: libPost + "C", RefWhy: wrWhy + ", SQ lock on", Target: "≤ 1.0×"},
	{Key: "percall-libmlx5-unlocked", Path: "the same against libmlx5 without its SQ lock", Pkg: lib, Lib: true,
		Bench: libPost + "Go", Unit: "ns/op", Ref: libPost + "CUnlocked", RefWhy: wrWhy + ", SQ lock off (MLX5_SINGLE_THREADED)"},
	{Key: "onecall-libmlx5", Path: "the same, one-call form (RDMAWriteSGE), against libmlx5", Pkg: lib, Lib: true,
		Bench: libPost + "GoOneCall", Unit: "ns/op", Ref: libPost + "C", RefWhy: wrWhy + ", SQ lock on", Target: "≤ 0.7×"},
	{Key: "burst-libmlx5", Path: "the same, RDMAWriteBurst of 32, against libmlx5", Pkg: lib, Lib: true,
		Bench: libPost + "GoBurst", Unit: "ns/op", Ref: libPost + "C", RefWhy: wrWhy + ", SQ lock on", Target: "≤ 0.35×"},
	{Key: "burst-libmlx5-postsend", Path: "the same against libmlx5's ibv_post_send of a chain of 32", Pkg: lib, Lib: true,
		Bench: libPost + "GoBurst", Unit: "ns/op", Ref: libPost + "CPostSend", RefWhy: "ibv_post_send, a chain of 32, SQ lock on"},
	{Key: "doorbell-each-libmlx5", Path: "one work request per Start/Complete (doorbell each), against libmlx5", Pkg: lib, Lib: true,
		Bench: libDB + "Go", Unit: "ns/op", Ref: libDB + "C", RefWhy: "the same, 1 per ibv_wr_start/complete, SQ lock on"},
	{Key: "doorbell-each-libmlx5-unlocked", Path: "the same against libmlx5 without its SQ lock", Pkg: lib, Lib: true,
		Bench: libDB + "Go", Unit: "ns/op", Ref: libDB + "CUnlocked", RefWhy: "the same, 1 per ibv_wr_start/complete, SQ lock off", Target: "≤ 1.0×"},
	{Key: "doorbell-each-post-libmlx5", Path: "the same, each posted by PostRDMAWriteSGE (Start, RDMAWriteSGE, Complete in one call), against libmlx5", Pkg: lib, Lib: true,
		Bench: libDB + "GoPost", Unit: "ns/op", Ref: libDB + "C", RefWhy: "the same, 1 per ibv_wr_start/complete, SQ lock on"},
	{Key: "doorbell-each-post-libmlx5-unlocked", Path: "the same against libmlx5 without its SQ lock", Pkg: lib, Lib: true,
		Bench: libDB + "GoPost", Unit: "ns/op", Ref: libDB + "CUnlocked", RefWhy: "the same, 1 per ibv_wr_start/complete, SQ lock off", Target: "≤ 1.0×"},
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
	{Key: "mkey-libmlx5", Path: "mkey configure, the four calls, a doorbell each, against libmlx5 (ns per configuration)", Pkg: lib, Lib: true,
		Bench: libMkey + "Go-batch1", Unit: "ns/config", Ref: libMkey + "C-batch1", RefUnit: "ns/config", RefWhy: mkWhy + ", 1 per doorbell", Target: "≤ 1.0×"},
	{Key: "mkey8-libmlx5", Path: "the same, 8 per doorbell, against libmlx5", Pkg: lib, Lib: true,
		Bench: libMkey + "Go-batch8", Unit: "ns/config", Ref: libMkey + "C-batch8", RefUnit: "ns/config", RefWhy: mkWhy + ", 8 per doorbell", Target: "≤ 1.0×"},
	{Key: "template", Path: "mkey configure through a template, a doorbell each", Pkg: verify,
		Bench: "BenchmarkMkeyConfigure/template-batch1", Unit: "ns/config", Ref: cHelper, RefWhy: cWhy, Target: "≤ 12 ns"},
	{Key: "template8", Path: "the same, 8 per doorbell", Pkg: verify,
		Bench: "BenchmarkMkeyConfigure/template-batch8", Unit: "ns/config", Ref: cHelper, RefWhy: cWhy, Target: "≤ 12 ns"},
	{Key: "mkey-template-libmlx5", Path: "mkey configure through a template, a doorbell each, against libmlx5's four calls", Pkg: lib, Lib: true,
		Bench: libMkey + "GoTemplate-batch1", Unit: "ns/config", Ref: libMkey + "C-batch1", RefUnit: "ns/config", RefWhy: mkWhy + ", 1 per doorbell", Target: "≤ 0.5×"},
	{Key: "mkey-template-post-libmlx5", Path: "the same, each posted by PostConfigureMkey (Start, ConfigureMkey, Complete in one call)", Pkg: lib, Lib: true,
		Bench: libMkey + "GoPost-batch1", Unit: "ns/config", Ref: libMkey + "C-batch1", RefUnit: "ns/config", RefWhy: mkWhy + ", 1 per doorbell", Target: "≤ 0.5×"},
	{Key: "mkey-template8-libmlx5", Path: "the same, 8 per doorbell", Pkg: lib, Lib: true,
		Bench: libMkey + "GoTemplate-batch8", Unit: "ns/config", Ref: libMkey + "C-batch8", RefUnit: "ns/config", RefWhy: mkWhy + ", 8 per doorbell", Target: "≤ 0.5×"},
	{Key: "poll", Path: "poll one CQE in batches of 16 (ns per batch)", Pkg: verify,
		Bench: "BenchmarkPollCQ/Go", Unit: "ns/op", Ref: "BenchmarkPollCQ/C-one-barrier", RefWhy: "C loop, one barrier per batch", Target: "≤ 1.3×"},
	{Key: "poll-libmlx5-order", Path: "the same against a C loop in libmlx5's order", Pkg: verify,
		Bench: "BenchmarkPollCQ/Go", Unit: "ns/op", Ref: "BenchmarkPollCQ/C", RefWhy: "C loop, a barrier per CQE", Target: "≤ 0.6×"},
	{Key: "generate", Path: "mlx5gen generate, 44.0 header, in process (BenchmarkGenerate)", Pkg: command,
		Bench: "BenchmarkGenerate", Unit: "ns/op"},
	{Key: "generate-cold", Path: "mlx5gen generate, 44.0 header, whole process, cold (model cache miss)", Pkg: "process",
		Bench: "mlx5gen generate", Unit: "ns/op", Target: "≤ 0.3 s"},
	{Key: "generate-warm", Path: "the same, nothing changed (output cache hit, tree up to date)", Pkg: "process",
		Bench: "mlx5gen generate warm", Unit: "ns/op", Target: "≤ 0.08 s"},
}
