module example.com/downstream

go 1.26.0

tool github.com/mlx5gen/mlx5gen/cmd/mlx5gen

require (
	github.com/dave/jennifer v1.7.1 // indirect
	github.com/mlx5gen/mlx5gen v0.0.0-00010101000000-000000000000 // indirect
	github.com/remyoudompheng/bigfft v0.0.0-20230129092748-24d4a6f8daec // indirect
	go.yaml.in/yaml/v3 v3.0.6 // indirect
	golang.org/x/sys v0.49.0 // indirect
	modernc.org/cc/v4 v4.31.0 // indirect
	modernc.org/mathutil v1.7.1 // indirect
	modernc.org/opt v0.2.0 // indirect
	modernc.org/sortutil v1.2.1 // indirect
	modernc.org/strutil v1.2.1 // indirect
	modernc.org/token v1.1.0 // indirect
)

replace github.com/mlx5gen/mlx5gen => ../..
