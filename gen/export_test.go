package gen

// SetTypeCheckHook sets the hook that changes a run's files before they
// are type-checked (nil removes it).
func SetTypeCheckHook(f func(*Result)) { typeCheckHook = f }
