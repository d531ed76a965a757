package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
)

// layoutHeaders makes the include directory rdma-core's cmake would make
// in its build tree for compiling a provider, from the tree at src, in
// inc: symbolic links for the published headers (libibverbs' as
// infiniband/, kernel-headers' rdma/ and linux/, util/, ccan/, mlx5dv.h),
// the kernel ABI wrappers its buildlib/make_abi_structs.py generates
// (kernel-abi/), valgrind's annotations switched off with the tree's own
// stub (cmake's ENABLE_VALGRIND=0), and a config.h with the values a
// Linux build of version gets. Only what qp.c and mlx5.h include is there.
func layoutHeaders(src, inc, version string) error {
	links := map[string][]string{ // directory under inc -> files of src
		"infiniband": {"libibverbs/arch.h", "libibverbs/opcode.h", "libibverbs/sa-kern-abi.h", "libibverbs/sa.h",
			"libibverbs/verbs.h", "libibverbs/verbs_api.h", "libibverbs/tm_types.h", "libibverbs/cmd_ioctl.h",
			"libibverbs/cmd_write.h", "libibverbs/driver.h", "libibverbs/kern-abi.h", "libibverbs/marshall.h",
			"kernel-headers/rdma/ib_user_ioctl_verbs.h", "kernel-headers/rdma/mlx5_user_ioctl_verbs.h",
			"providers/mlx5/mlx5dv.h", "providers/mlx5/mlx5_api.h"},
	}
	for dir, glob := range map[string]string{"rdma": "kernel-headers/rdma/*.h", "linux": "kernel-headers/linux/*.h",
		"util": "util/*.h", "ccan": "ccan/*.h"} {
		fs, err := filepath.Glob(filepath.Join(src, glob))
		if err != nil || len(fs) == 0 {
			return fmt.Errorf("-rdma-core-src %s: no %s", src, glob)
		}
		for _, f := range fs {
			rel, _ := filepath.Rel(src, f)
			links[dir] = append(links[dir], rel)
		}
	}
	for dir, fs := range links {
		if err := os.MkdirAll(filepath.Join(inc, dir), 0o755); err != nil {
			return err
		}
		for _, f := range fs {
			if err := os.Symlink(filepath.Join(src, f), filepath.Join(inc, dir, filepath.Base(f))); err != nil {
				return err
			}
		}
	}
	for _, d := range []string{"valgrind", "kernel-abi"} {
		if err := os.MkdirAll(filepath.Join(inc, d), 0o755); err != nil {
			return err
		}
	}
	for name, f := range map[string]string{"memcheck.h": "valgrind-memcheck.h", "drd.h": "valgrind-drd.h"} {
		if err := os.Symlink(filepath.Join(src, "buildlib", "fixup-include", f), filepath.Join(inc, "valgrind", name)); err != nil {
			return err
		}
	}
	py, err := exec.LookPath("python3")
	if err != nil {
		return fmt.Errorf("the libmlx5 rows need python3 to run the tree's buildlib/make_abi_structs.py, as rdma-core's cmake does: %v", err)
	}
	for _, h := range []string{"ib_user_verbs.h", "mlx5-abi.h"} {
		if err := runIn(filepath.Join(src, "kernel-headers"), py, filepath.Join(src, "buildlib", "make_abi_structs.py"),
			"rdma/"+h, filepath.Join(inc, "kernel-abi", h)); err != nil {
			return err
		}
	}
	return os.WriteFile(filepath.Join(inc, "config.h"), []byte(configH(version)), 0o644)
}

// configH is buildlib/config.h.in as cmake fills it on Linux/x86-64 with
// gcc, for the macros the provider's headers test; paths that only
// libibverbs' loader uses are placeholders.
func configH(version string) string {
	return strings.Join([]string{
		"/* Written by mlx5bench for compiling libmlx5's qp.c outside cmake. */",
		"#ifndef CONFIG_H_IN", "#define CONFIG_H_IN",
		"#define HAVE_STATEMENT_EXPR 1", "#define HAVE_BUILTIN_TYPES_COMPATIBLE_P 1", "#define HAVE_TYPEOF 1",
		"#define HAVE_ISBLANK 1", "#define HAVE_BUILTIN_CLZ 1", "#define HAVE_BUILTIN_CLZL 1",
		fmt.Sprintf("#define PACKAGE_VERSION %q", version), `#define STREAM_CLOEXEC "e"`,
		`#define RDMA_CDEV_DIR "/dev/infiniband"`, `#define IBV_CONFIG_DIR "/etc/libibverbs.d"`,
		`#define VERBS_PROVIDER_DIR "/nonexistent"`, `#define VERBS_PROVIDER_SUFFIX "-rdmav34.so"`,
		"#define IBVERBS_PABI_VERSION 34", "#define HAVE_FUNC_ATTRIBUTE_ALWAYS_INLINE 1",
		"#define HAVE_FUNC_ATTRIBUTE_IFUNC 1", "#define HAVE_FUNC_ATTRIBUTE_SYMVER 1", "#define HAVE_WORKING_IF_H 1",
		"#define HAVE_FULL_SYMBOL_VERSIONS 1", fmt.Sprintf("#define SIZEOF_LONG %d", strconv.IntSize/8), // Go's int is C's long on Linux's LP64 and ILP32
		"#define VERBS_IOCTL_ONLY 0", "#define VERBS_WRITE_ONLY 0", // IOCTL_MODE both
		"#endif", ""}, "\n")
}
