package sim_test

import "github.com/mlx5gen/mlx5gen/runtime/cq"

func a20explain(w *cq.WC) string { return w.Err().Error() }
