/* A tiny stand-in for mlx5dv.h, one release later. */
#ifndef TINY_H
#define TINY_H
#include <stdint.h>

#define TINY_MAX 32

enum tiny_flags {
	TINY_A = 1 << 0,
	TINY_B = 1 << 1,
	TINY_C = 1 << 2,
};

enum tiny_new_enum {
	TINY_X = 7,
};

struct tiny_seg {
	uint32_t word;
	uint32_t half;
	uint8_t bits:5;
	uint64_t wide;
};

struct tiny_new_only {
	int y;
};

int tiny_open(long fd, unsigned flags);
int _tiny_close(int fd, int how);
#define tiny_close(fd) _tiny_close(fd, 0)
void tiny_renamed_param(int b);
int tiny_added(void);
/* One member is inserted before b: b, c and d move together. */
struct tiny_ctx {
	int a;
	int ins;
	int b;
	int c;
	int d;
};

#define tiny_reg(pd, a) _tiny_reg(pd, a, 1)
#define tiny_ws(x) ( ( x ) + 1 )
#define TINY_STR "new"
#define tiny_new_macro(x) (x)
#endif
