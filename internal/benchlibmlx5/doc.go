// Package benchlibmlx5 measures runtime/sq beside libmlx5's own
// work-request builders (ibv_wr_rdma_write, ibv_post_send,
// mlx5dv_wr_mkey_configure and its setters) in one process: the libmlx5
// column of scripts/bench.sh (docs/performance.md).
//
// libmlx5 is not part of this project. With the build tag libmlx5, the
// package's C harness (harness.c) is compiled against a user-supplied
// rdma-core source tree and linked with libmlx5's qp.c, which
// internal/cmd/mlx5bench builds into a cache directory once per tree
// (CGO_CFLAGS and CGO_LDFLAGS point there). Without the tag only the Go
// twins and the byte comparison are built, and their tests run in CI
// without a tree.
//
// The harness sets up a queue pair in plain memory the way the project's
// reference vectors were recorded (testdata/vectors/README.md): libmlx5's
// mlx5_qp_fill_wr_pfns installs the builders on a struct mlx5_qp whose
// ring, doorbell record and doorbell register are a qmem.Memory; the
// completions are simulated. TestBytesAgree checks that each libmlx5 path
// writes what its Go twin writes before any figure is taken.
package benchlibmlx5
