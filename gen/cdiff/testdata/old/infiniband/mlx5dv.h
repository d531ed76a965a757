/* A tiny stand-in for mlx5dv.h: the declarations cdiff's tests compare. */
#ifndef TINY_H
#define TINY_H
#include <stdint.h>

#define TINY_MAX 16
#define TINY_GONE 1

enum tiny_flags {
	TINY_A = 1 << 0,
	TINY_B = 1 << 1,
};

struct tiny_seg {
	uint32_t word;
	uint16_t half;
	uint8_t bits:4;
};

struct tiny_old_only {
	int x;
};

int tiny_open(int fd, unsigned flags);
int tiny_close(int fd);
void tiny_renamed_param(int a);
/* One member is inserted before b: b, c and d move together. */
struct tiny_ctx {
	int a;
	int b;
	int c;
	int d;
};

#define tiny_reg(pd, a) _tiny_reg(pd, a, 0)
#define tiny_ws(x) ((x)+1)
#define TINY_STR "old"
#endif
