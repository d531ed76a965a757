package device

import (
	"errors"
	"fmt"
	"syscall"

	mlx "github.com/mlx5gen/mlx5gen/generated/mlx5dv"
	"github.com/mlx5gen/mlx5gen/runtime/cq"
	"github.com/mlx5gen/mlx5gen/runtime/sq"
)

// Mkey is an indirect mkey, configured by UMR work requests
// (sq.SQ.MkeyConfigure and the setters).
type Mkey struct {
	mk  *sq.Mkey
	n   *node
	c   *Context
	sig *sigCtx // signature mkeys (BLOCK_SIGNATURE) only
}

// LKey returns the mkey's key.
func (m *Mkey) LKey() uint32 { return m.mk.LKey }

// Mkey returns the writer's view of the mkey, for the UMR work requests;
// a signature mkey's carries its PSV indexes (MemPSV, WirePSV), ready
// for mlx5dv_wr_set_mkey_sig_block.
func (m *Mkey) Mkey() *sq.Mkey { return m.mk }

// Close destroys the mkey; the context's CQs stop looking it up.
func (m *Mkey) Close() error {
	m.c.mu.Lock()
	defer m.c.mu.Unlock()
	return closeNode(m.n)
}

// CreateMkey creates an indirect mkey (mlx5dv_create_mkey) of up to
// maxEntries entries, with flags (INDIRECT, BLOCK_SIGNATURE, CRYPTO, ...).
// On a DEVX device the API creates a signature or crypto mkey itself, by
// command, after checking HCACaps (devxobjs.go): so it knows a signature
// mkey's PSV indexes, which libmlx5 keeps private. Elsewhere the backend
// creates it, and gives the PSV indexes. Every CQ
// of the context, open now or created later, records the signature
// errors of its completions on it until it is closed (Check reads them),
// as libmlx5's context-wide mkey table does. Creating and closing may
// happen while other goroutines poll those CQs: registering and removing
// the mkey wait for a poll in progress to end (the CQ's gate), so no
// poller reads the table while it changes (devicetest CloseContextRace).
func (pd *PD) CreateMkey(flags mlx.MkeyInitAttrFlags, maxEntries int) (*Mkey, error) {
	// mlx5dv_mkey_init_attr.max_entries is a uint16_t.
	if err := inRange("maxEntries", maxEntries, 1, 1<<16-1, ""); err != nil {
		return nil, fmt.Errorf("device: CreateMkey: %w", err)
	}
	if err := validateMkey(flags, maxEntries); err != nil {
		return nil, fmt.Errorf("device: CreateMkey: %w", err)
	}
	if flags&mlx.MLX5DV_MKEY_INIT_ATTR_FLAGS_INDIRECT == 0 {
		return nil, fmt.Errorf("device: CreateMkey: %w", cfgErr("flags", flags, "lacks MLX5DV_MKEY_INIT_ATTR_FLAGS_INDIRECT, the only mkey the API creates (mlx5dv_create_mkey(3))"))
	}
	c := pd.c
	create, err := pd.mkeyCreator(flags)
	if err != nil {
		return nil, fmt.Errorf("device: CreateMkey: %w", err)
	}
	mk := &Mkey{c: c}
	n, err := c.create("CreateMkey", []*node{pd.n}, func() (string, func() error, error) {
		b, err := create(flags, maxEntries)
		if err != nil {
			return "", nil, err
		}
		mk.mk = sq.NewMkey(b.LKey(), flags, maxEntries)
		if mk.mk.HasSig() {
			if mk.mk.MemPSV, mk.mk.WirePSV, err = b.PSVs(); err != nil {
				b.Close()
				return "", nil, fmt.Errorf("signature mkey %#x: %w", b.LKey(), err)
			}
			mk.sig = &sigCtx{mk: mk.mk}
			if err := c.addSig(mk); err != nil {
				b.Close()
				return "", nil, err
			}
		}
		return fmt.Sprintf("mkey %#x", b.LKey()), func() error {
			if err := c.removeSig(mk); err != nil {
				return fmt.Errorf("%w; the mkey stays allocated", err)
			}
			return b.Close()
		}, nil
	})
	if err != nil {
		return nil, err
	}
	mk.n = n
	return mk, nil
}

// Check reports the signature error the context's CQs recorded on the
// mkey since the last Check, and clears it (mlx5dv_mkey_check):
// MLX5DV_MKEY_NO_ERR when there is none. It fails for an mkey without a
// signature context.
//
// A CQ records the error when it is polled and finds the signature-error
// completion, which goes to a CQ of the side whose mkey checked the data,
// not to the work request's requester: for an mkey in the local SGE of a
// work request, its QP's send CQ; for the mkey an RDMA WRITE or READ names
// by its rkey, or one in a receive buffer, the CQ the remote QP receives
// to, on the other device when there are two (ExampleMkey_Check). So poll
// the mkey owner's CQ before Check: the requester's successful completion
// comes first and says nothing of the signature. (Where the completion
// goes is the simulator's model, docs/simulator.md; the man page does not
// say.)
func (m *Mkey) Check() (cq.MkeyErr, error) {
	if err := m.n.check("Check"); err != nil {
		return cq.MkeyErr{}, err
	}
	if m.sig == nil {
		return cq.MkeyErr{}, fmt.Errorf("device: %s: Check: created without MLX5DV_MKEY_INIT_ATTR_FLAGS_BLOCK_SIGNATURE", m.n.what)
	}
	return m.sig.check()
}

// sigCtx is a signature mkey's context as the pollers see it (libmlx5's
// struct mlx5_sig_ctx): the last error, recorded by whichever CQ polled
// it, and the error count the mkey's next UMR tells the device.
type sigCtx struct {
	mk  *sq.Mkey
	rec cq.Mkey
}

// RecordSigErr implements cq.SigRecorder.
func (s *sigCtx) RecordSigErr(e cq.SigErr) bool {
	s.mk.SigError()
	return s.rec.RecordSigErr(e)
}

// check decodes the error against the signatures the mkey was last
// configured with.
func (s *sigCtx) check() (cq.MkeyErr, error) {
	mem, wire := &s.mk.Mem, &s.mk.Wire
	s.rec.Lock() // the poller may be recording an error
	s.rec.Mem = sigKind(mem.Present, mem.Domain.SigType, mem.Crc.Type)
	s.rec.Wire = sigKind(wire.Present, wire.Domain.SigType, wire.Crc.Type)
	s.rec.Unlock()
	e, err := s.rec.Check()
	if err != nil {
		return e, fmt.Errorf("device: mkey %#x: Check: %w", s.mk.LKey, err)
	}
	return e, nil
}

// sigKind is how a domain was configured, as mlx5dv_mkey_check decodes
// its guard.
func sigKind(present bool, t mlx.SigType, crc mlx.SigCRCType) cq.SigKind {
	switch {
	case !present:
		return cq.SigNone
	case t == mlx.MLX5DV_SIG_TYPE_T10DIF:
		return cq.SigT10DIF
	case crc == mlx.MLX5DV_SIG_CRC_TYPE_CRC32:
		return cq.SigCRC32
	case crc == mlx.MLX5DV_SIG_CRC_TYPE_CRC32C:
		return cq.SigCRC32C
	case crc == mlx.MLX5DV_SIG_CRC_TYPE_CRC64_XP10:
		return cq.SigCRC64XP10
	}
	return cq.SigNone
}

// addSig registers a signature mkey with every open CQ; the caller holds
// c.mu.
func (c *Context) addSig(mk *Mkey) error {
	for i, q := range c.cqs {
		if err := q.poll.AddMkey(mk.mk.LKey>>8, mk.sig); err != nil {
			for _, p := range c.cqs[:i] {
				_, rerr := p.poll.RemoveMkey(mk.mk.LKey >> 8)
				err = errors.Join(err, rerr)
			}
			return err
		}
	}
	c.sigs = append(c.sigs, mk)
	return nil
}

// removeSig takes a signature mkey out of every CQ (nothing for another
// mkey); the caller holds c.mu.
func (c *Context) removeSig(mk *Mkey) error {
	for i, m := range c.sigs {
		if m == mk {
			c.sigs = append(c.sigs[:i], c.sigs[i+1:]...)
			var errs []error
			for _, q := range c.cqs {
				_, err := q.poll.RemoveMkey(mk.mk.LKey >> 8)
				errs = append(errs, err)
			}
			return errors.Join(errs...)
		}
	}
	return nil
}

// addCQ registers a new CQ, and every signature mkey with its poller;
// the caller holds c.mu.
func (c *Context) addCQ(q *CQ) error {
	for _, m := range c.sigs {
		if err := q.poll.AddMkey(m.mk.LKey>>8, m.sig); err != nil {
			return err
		}
	}
	c.cqs = append(c.cqs, q)
	return nil
}

// removeCQ forgets a closed CQ; the caller holds c.mu.
func (c *Context) removeCQ(q *CQ) {
	for i, x := range c.cqs {
		if x == q {
			c.cqs = append(c.cqs[:i], c.cqs[i+1:]...)
			return
		}
	}
}

// DEK is a data encryption key.
type DEK struct {
	dek sq.DEK
	n   *node
	c   *Context
}

// DEK returns the key as the crypto work requests name it.
func (d *DEK) DEK() *sq.DEK { return &d.dek }

// ObjectID returns the key's DEVX object id.
func (d *DEK) ObjectID() uint32 { return d.dek.ObjectID }

// Close destroys the key.
func (d *DEK) Close() error {
	d.c.mu.Lock()
	defer d.c.mu.Unlock()
	return closeNode(d.n)
}

// CreateDEK creates a data encryption key (mlx5dv_dek_create) from a
// plaintext key. On a DEVX device the API creates it itself, by
// CREATE_GENERAL_OBJECT, after checking HCACaps (an AES-XTS engine, DEK
// objects, and plaintext import: a device that takes wrapped keys only
// is refused, as this API offers no crypto login); its ObjectID is the
// object id the device returned, which libmlx5 keeps private.
func (pd *PD) CreateDEK(cfg DEKConfig) (*DEK, error) {
	if err := validateDEK(&cfg); err != nil {
		return nil, fmt.Errorf("device: CreateDEK: %w", err)
	}
	want := 32
	if cfg.KeySize == mlx.MLX5DV_CRYPTO_KEY_SIZE_256 {
		want = 64
	}
	if len(cfg.Key) != want {
		return nil, fmt.Errorf("device: CreateDEK: %w", cfgErr("DEKConfig.Key", nil, "%d bytes, %v AES-XTS needs %d (key1 and key2)", len(cfg.Key), cfg.KeySize, want))
	}
	create, err := pd.dekCreator()
	if err != nil {
		return nil, fmt.Errorf("device: CreateDEK: %w", err)
	}
	d := &DEK{c: pd.c}
	n, err := pd.c.create("CreateDEK", []*node{pd.n}, func() (string, func() error, error) {
		b, err := create(&cfg)
		if err != nil {
			return "", nil, err
		}
		d.dek.ObjectID = b.ObjectID()
		return fmt.Sprintf("DEK %#x", d.dek.ObjectID), b.Close, nil
	})
	if err != nil {
		return nil, err
	}
	d.n = n
	return d, nil
}

// mkeyCreator returns what creates a mkey of flags: the API's DEVX
// commands for a signature or crypto mkey on a DEVX device, once HCACaps
// says the device has the feature; the backend otherwise.
func (pd *PD) mkeyCreator(flags mlx.MkeyInitAttrFlags) (func(mlx.MkeyInitAttrFlags, int) (BackendMkey, error), error) {
	if flags&(mlx.MLX5DV_MKEY_INIT_ATTR_FLAGS_BLOCK_SIGNATURE|mlx.MLX5DV_MKEY_INIT_ATTR_FLAGS_CRYPTO) == 0 {
		return pd.b.CreateMkey, nil
	}
	d, pdn, ok, err := pd.devxPD()
	if err != nil {
		return nil, err
	}
	if !ok {
		return pd.b.CreateMkey, pd.c.offloadCaps(flags)
	}
	h, err := pd.c.HCACaps()
	if err != nil {
		return nil, err
	}
	if err := checkMkeyCaps(h, flags); err != nil {
		return nil, err
	}
	return func(flags mlx.MkeyInitAttrFlags, maxEntries int) (BackendMkey, error) {
		return createDevxMkey(d, pdn, flags, maxEntries)
	}, nil
}

// dekCreator returns what creates a DEK: the API's DEVX command on a
// DEVX device that has DEKs, the backend otherwise.
func (pd *PD) dekCreator() (func(*DEKConfig) (BackendDEK, error), error) {
	d, pdn, ok, err := pd.devxPD()
	if err != nil {
		return nil, err
	}
	if !ok {
		return func(cfg *DEKConfig) (BackendDEK, error) { return pd.b.CreateDEK(*cfg) },
			pd.c.offloadCaps(mlx.MLX5DV_MKEY_INIT_ATTR_FLAGS_CRYPTO)
	}
	h, err := pd.c.HCACaps()
	if err != nil {
		return nil, err
	}
	if err := checkDEKCaps(h); err != nil {
		return nil, err
	}
	return func(cfg *DEKConfig) (BackendDEK, error) { return createDevxDEK(d, pdn, cfg) }, nil
}

// offloadCaps refuses, at create time on a backend without DEVX, a
// signature or crypto object on a device whose Info caps lack the
// offload, as libmlx5 does with EOPNOTSUPP (a DEVX device is asked with
// QUERY_HCA_CAP instead: HCACaps).
func (c *Context) offloadCaps(flags mlx.MkeyInitAttrFlags) error {
	caps := c.info.Caps
	switch {
	case flags&mlx.MLX5DV_MKEY_INIT_ATTR_FLAGS_BLOCK_SIGNATURE != 0 && !caps.Signature:
		return fmt.Errorf("%q reports no signature offload (Caps.Signature, MLX5DV_CONTEXT_MASK_SIGNATURE_OFFLOAD): %w", c.name, syscall.EOPNOTSUPP)
	case flags&mlx.MLX5DV_MKEY_INIT_ATTR_FLAGS_CRYPTO != 0 && !caps.Crypto:
		return fmt.Errorf("%q reports no crypto offload (Caps.Crypto, MLX5DV_CONTEXT_MASK_CRYPTO_OFFLOAD): %w", c.name, syscall.EOPNOTSUPP)
	}
	return nil
}
