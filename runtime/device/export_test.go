package device

// WithoutBackend runs f with no backend registered for prefix, and puts
// it back afterwards: TestOpenErrors checks what Open says when a program
// forgot to import the simulator, in a test binary whose examples import
// it. Tests only; nothing else may run Open meanwhile.
func WithoutBackend(prefix string, f func()) {
	regMu.Lock()
	b, ok := backends[prefix]
	delete(backends, prefix)
	regMu.Unlock()
	defer func() {
		if ok {
			regMu.Lock()
			backends[prefix] = b
			regMu.Unlock()
		}
	}()
	f()
}

// BackendOf returns the backend context c was opened on, so a test's
// fake device can show what the API sent it.
func BackendOf(c *Context) BackendContext { return c.b }
