// Package verify holds the proofs that the generated package matches
// rdma-core's C: its tests compare the generated segment encoders with the
// static inline helpers of mlx5dv.h (through cref, with cgo), check every
// generated segment's size and field offsets against offsetof, and measure
// the generated encoders against the C helpers in one benchmark run.
package verify
