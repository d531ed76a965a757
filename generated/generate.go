// Package generated holds the packages mlx5gen generates. They are
// committed and importable as they are; regenerate them with
//
//	go generate ./generated/
//
// generated/mlx5dv is generated from the rdma-core 44.0 header (Debian
// bookworm), fetched into the header cache by scripts/rdma-headers.sh, so
// that the result does not depend on what the machine has installed. See
// the README for the policy and for users of rdma-core 56 or 65.
//
// generated/mlx5rules holds the tables the runtime's checker runs on
// (Funcs, Rules, chain checks), apart from what a user of generated/mlx5dv
// needs.
//
// generated/mlx5prm holds the device command layouts (PRM) of
// spec/hw/prm.yaml, for DEVX: they do not depend on the header.
package generated

//go:generate go run ../cmd/mlx5gen generate -rdma-core 44.0 -out mlx5dv -rules ../spec/RULES.md -tables mlx5rules -bindings mlx5verbs -prm mlx5prm -import github.com/mlx5gen/mlx5gen/generated/mlx5dv
//go:generate go run ../gen/alias/mkmanifest -dir mlx5dv -o ../gen/alias/base.json
