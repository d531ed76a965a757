// Package downstream is a module that uses mlx5gen the way a service
// would: go generate writes the mlx5dv package from the rdma-core header
// installed on the machine (libibverbs-dev), and the code below uses it.
// mlx5gen's tests copy it, point its replace directive at the checkout,
// and run go generate, go build, go vet and go test in it.
package downstream

//go:generate go run github.com/mlx5gen/mlx5gen/cmd/mlx5gen generate -out mlx5dv
