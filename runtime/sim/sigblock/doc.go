// Package sigblock is the arithmetic of the simulated device's signature
// and crypto offloads (mlx5dv_wr_set_mkey_sig_block(3),
// mlx5dv_wr_set_mkey_crypto(3)): the T10-DIF guards (CRC-16 0x8BB7 and the
// IP checksum), CRC32, CRC32C and CRC64_XP10, the per-block protection
// tuples with their generate, check and strip passes, and AES-XTS over data
// units. It is pure Go, depends on nothing of the runtime, assumes no host
// byte order and allocates nothing per block.
package sigblock
