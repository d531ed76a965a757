// Package downstream is a module that uses mlx5gen the way a service
// would: go generate writes the mlx5dv package from the rdma-core header
// installed on the machine (libibverbs-dev), with -alias, so that its types
// are those of mlx5gen's committed package wherever they agree and its
// constants go straight into mlx5gen's runtime; the code below posts a work
// request through runtime/sq with them, on plain memory and on the
// simulated device (runtime/device, runtime/sim).
//
// mlx5gen's TestDownstream copies it, makes its go.mod with the steps
// docs/downstream.md gives (go mod init; require and replace mlx5gen; go
// get -tool; go get of the runtime packages it imports),
// and runs go generate, go build, go vet and go test in it, from the
// rdma-core 44.0 header and from a newer one.
package downstream

//go:generate go tool mlx5gen generate -alias github.com/mlx5gen/mlx5gen/generated/mlx5dv -out mlx5dv
