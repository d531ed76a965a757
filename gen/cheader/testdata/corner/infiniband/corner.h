/* Layout corner cases the model must lay out exactly as gcc does. The
 * file sits under infiniband/ so that the model treats it as an rdma-core
 * header. TestCornerCasesMatchGCC compares every declaration with gcc. */
#ifndef CORNER_H
#define CORNER_H
#include <stdint.h>
#include <linux/types.h>
#include <pthread.h>

typedef __u64 __attribute__((aligned(4))) u64_a4;   /* a typedef may lower alignment */
typedef uint32_t __attribute__((aligned(16))) u32_a16;
typedef u32_a16 u32_a16_again;                       /* and the next typedef inherits it */

struct c_packed { uint8_t a; uint32_t b; uint16_t c; } __attribute__((packed));
struct c_packed_aligned {                            /* the shape of mlx5_wqe_ctrl_seg */
	__be32 a; __be32 b; uint8_t c; __be16 d; uint8_t e; __be32 f;
} __attribute__((__packed__)) __attribute__((__aligned__(4)));
struct __attribute__((packed)) c_packed_front { uint8_t a; uint64_t b; };
struct c_member_aligned { char a; int b __attribute__((aligned(16))); char c; };
struct c_packed_member_aligned { char a; int b __attribute__((aligned(8))); char c; } __attribute__((packed));
struct c_typedef_aligned { char a; u64_a4 b; char c; u32_a16 d; char e; u32_a16_again f; __aligned_u64 g; };
struct c_bits {
	unsigned a:3; unsigned b:30; unsigned :0; unsigned c:1; uint8_t d;
	uint64_t e:40; uint64_t f:30; int :5; short g:9; char h:2; __be16 i:4;
};
struct c_bits_packed { uint8_t a:3; uint32_t b:30; uint8_t c; uint64_t d:63; } __attribute__((packed));
struct c_only_unnamed_bits { char a; int :7; };
union c_union { uint32_t a:7; uint64_t b; char c[3]; };
struct c_flex { uint16_t n; uint64_t data[]; };
struct c_zero { uint32_t n; uint8_t z[0]; };
struct c_nested {
	int a;
	union { struct { uint8_t x, y; }; uint32_t xy; };
	struct { char q; short r; } named;
	struct c_inner_tagged { char t; } tagged;
	struct c_flex *p;
	union { struct { uint64_t deep:12; } in; } dd;
};
struct c_empty {};
struct c_aligned_record { char a; } __attribute__((aligned(32)));
struct c_contains_aligned { char a; struct c_aligned_record r; char b; };
struct c_alignas { char a; _Alignas(8) char b; };
struct c_ethhdr_like { unsigned char d[6]; unsigned char s[6]; __be16 p; } __attribute__((packed));
struct c_contains_packed { char a; struct c_ethhdr_like e; int b; struct c_ethhdr_like arr[3]; };
struct c_arrays { char a; uint16_t m[2][3]; void *ptrs[2]; long double ld; __int128 big; };
struct c_fnptrs { int (*cb)(void *ctx, int n); void (*done)(void); };
struct c_libc { char a; pthread_mutex_t mu; pthread_cond_t cond; };
typedef struct { char a; int b; } c_typedef_anon;
struct c_uses_typedef_anon { char x; c_typedef_anon t; };

enum c_big { C_BIG = 1ULL << 40, C_SMALL = 1 };
enum c_neg { C_NEG = -5, C_POS = 3 };
enum c_u32 { C_U32 = 0x80000000 };
enum c_packed_enum_use { C_PE = 1 };

#define C_MACRO_LL (1LL << 40)
#define C_MACRO_U 7u
#define C_MACRO_NEG (-3)
#define C_MACRO_ENUM C_NEG
#define C_MACRO_CHAR 'a'
#define C_MACRO_SIZEOF (sizeof(struct c_packed) * 2)
#define C_MACRO_SHIFT (1 << 31)
#define C_MACRO_ULL 0xffffffffffffffffULL
#define C_MACRO_CAST ((uint8_t)0x1ff)
/* C's arithmetic on LP64, compared with gcc: conversions, wrap-around of
 * unsigned values, short-circuit operands that are not evaluated. */
#define C_ARITH_WRAP (0xffffffffffffffff + 1)
#define C_ARITH_SHORT_CIRCUIT (0 && 1 / 0)
#define C_ARITH_TERNARY_DEAD (1 ? 2 : 1 / 0)
#define C_ARITH_NEG_LT_UINT (-1 < 0u)
#define C_ARITH_NEG_LONG_LT_UINT (-1L < 0u)
#define C_ARITH_NEG_LL_LT_ULONG (-1LL < 0ul)
#define C_ARITH_UINT_SUB (1u - 2)
#define C_ARITH_ULONG_SUB (1ul - 2)
#define C_ARITH_SHR_NEG (-1 >> 1)
#define C_ARITH_INT_PLUS_U (0x7fffffff + 1u)
#define C_ARITH_TERNARY_TYPE (1 ? -1 : 0u)
#define C_ARITH_CHAR ('a' * 2)
#define C_ARITH_NOT_U (~0u >> 31)
#define C_ARITH_UCHAR_PROMOTE ((unsigned char)-1 + 1)
#define C_ARITH_SHORT_CAST ((short)0x12345)
#define C_ARITH_MOD_NEG (5 % -3)
#define C_ARITH_DIV_NEG (-5 / 2)
#define C_ARITH_BIG_DEC 4294967296
#define C_ARITH_HEX_UINT 0x80000000
#define C_ARITH_LONG_MIN (-9223372036854775807L - 1)
#define C_ARITH_SHL_SIGN (1L << 63)
#define C_ARITH_ULL_SHIFT (1ULL << 63 >> 3)
#define C_ARITH_ENUM_MIX (C_NEG * 2u)

/* #pragma pack as gcc keeps it: a stack with identifiers, values, resets,
 * nesting, across includes and through _Pragma. Each record is shaped like
 * mlx5_wqe_ctrl_seg without attributes: 16 bytes at pack(1), 20 without. */
#define C_CTRL { __be32 a; __be32 b; uint8_t c; __be16 d; uint8_t e; __be32 f; }
#pragma pack(push, 1)
#pragma pack(push, 4)
#pragma pack(pop)
struct c_pack_push1 C_CTRL;
#pragma pack(pop)
struct c_pack_none C_CTRL;
_Pragma("pack(1)")
struct c_pack_operator C_CTRL;
#pragma pack()
#define C_PACK_1 _Pragma("pack(push, 1)")
#define C_PACK_END _Pragma("pack(pop)")
C_PACK_1
struct c_pack_from_macro C_CTRL;
C_PACK_END
struct c_pack_after_macro C_CTRL;
#pragma pack(2)
#include "corner_pack.h"
struct c_pack_set_by_include C_CTRL;
#pragma pack()
#pragma pack(1)
#pragma pack(push, 8)
#pragma pack(pop)
struct c_pack_1_push8_pop C_CTRL;
#pragma pack()
#pragma pack(push)
struct c_pack_bare_push C_CTRL;
#pragma pack(pop)
#pragma pack(push, c_outer, 2)
#pragma pack(push, c_inner, 8)
#pragma pack(push, 1)
struct c_pack_three_deep C_CTRL;
#pragma pack(pop, c_outer)
struct c_pack_popped_to_ident C_CTRL;
#pragma pack(push, c_x, 1)
#pragma pack(pop, c_unknown) /* gcc pops the top entry anyway */
struct c_pack_pop_unknown_ident C_CTRL;
#pragma pack(pop) /* empty stack: gcc warns and changes nothing */
#pragma pack(3)   /* not a power of two: gcc ignores it */
#pragma pack(show)
#pragma pack
struct c_pack_ignored_forms C_CTRL;
/* a comment over lines that mentions
#pragma pack(1)
   and closes before a definition */ struct c_after_comment { char a; int b; };
#define C_CONTINUED_PACK _Pragma("pack(push, 2)") \
	/* a continued line */
C_CONTINUED_PACK
struct c_pack_continued { char a; int b; };
#pragma pack(pop)
#pragma pack(4)
struct c_pack4_members { char a; uint64_t b; char c; int d __attribute__((aligned(16))); char e; long double f; };
struct c_pack4_record_aligned { char a; } __attribute__((aligned(8)));
struct c_pack4_bits { char a; int b:20; char c; int d:30; uint64_t e:40; char f:4; short g:12; int :0; char h; };
struct c_pack4_nested { char a; struct c_pack_none n; struct c_packed p; struct c_flex *q; };
#pragma pack(2)
struct c_pack2_bits { char a; long b:40; char c:4; short d:12; int e:17; long :0; char z; };
union c_pack2_union { char a; uint64_t b; int c:3; };
#pragma pack(16)
struct c_pack16 { char a; long double b; __int128 c; };
#pragma pack(8)
#pragma pack(0) /* back to the default, as pack() */
struct c_pack0 { char a; long double b; };
#pragma pack()
#endif
