// Package cheader models the C declarations of rdma-core's mlx5dv.h and the
// RDMA headers it includes, laid out exactly as gcc lays them out on
// x86-64.
//
// Load parses a header with modernc.org/cc/v4 and returns a Model:
//
//	m, err := cheader.Load(cheader.Config{IncludeRoot: "/usr/include"})
//	ctrl := m.Struct("mlx5_wqe_ctrl_seg") // Size 16, Align 4, Packed
//
// # Scope
//
// The model covers the RDMA headers: rdma-core's own (infiniband/ under the
// include root: mlx5dv.h, verbs.h, mlx5_api.h, ...) and the kernel's RDMA
// uapi headers (rdma/), which rdma-core includes and embeds. Records from
// libc or other kernel headers that those declarations use (pthread_mutex_t,
// ...) are laid out too and listed in Model.External.
//
// # Layout
//
// cc/v4 computes layouts but ignores __attribute__((packed)), so it puts
// struct mlx5_wqe_ctrl_seg at 20 bytes where gcc says 16. The model reads
// attributes off the syntax tree and lays every record out itself, following
// the System V x86-64 ABI and GNU C:
//
//   - a member's alignment is its type's, 1 in a packed record, raised by
//     aligned(N) or _Alignas on the member; aligned(N) on a typedef sets the
//     type's alignment (it may lower it);
//   - a bitfield never straddles a unit of its declared type unless the
//     record is packed; ':0' moves to the next unit; unnamed bitfields do
//     not align the record;
//   - flexible ([]) and zero-length ([0]) arrays take no space but align;
//   - a record's alignment is the largest member alignment, raised by
//     aligned(N) on the record; its size is rounded up to it;
//   - #pragma pack(n) caps every member's alignment at n (aligned(N) on a
//     member included, not aligned(N) on the record) and lets bitfields
//     straddle units. The model keeps gcc's pack stack (push and pop with
//     identifiers and values, pack(), forms gcc ignores) across includes
//     and through _Pragma, in translation order: it serves the headers to
//     cc/v4 with a marker pragma before each line (see source.go).
//
// What the model cannot lay out exactly it refuses with a LayoutError naming
// the declaration: a #pragma pack that changes inside a definition or on
// its lines (_Pragma), a pack form or argument it does not know (a macro,
// which gcc would expand), packed on a single member, mode or vector_size
// attributes, aligned on a bitfield, bare aligned. A macro whose
// value cc/v4 computed through sizeof or offsetof of a record cc lays out
// unlike gcc is skipped with SkipLayout rather than reported wrong.
//
// The gcc comparison test (TestLayoutMatchesGCC) proves all of this for
// rdma-core 44.0, 56.1 and 65.0: it compiles a program printing sizeof,
// _Alignof and offsetof of every record and field and the value and type of
// every constant, and requires zero differences.
//
// # Constants and macros
//
// Enumerators carry the type GNU C gives them (int when the value fits,
// the enum's type otherwise); enums are unsigned unless a value is negative.
// Object-like macros with an integer value become Macros with their C type;
// every other macro is kept in Model.Skipped with the reason
// (function-like, guard, empty, string, float, pointer, alias,
// not-constant, layout-dependent).
//
// # Bounds
//
// Any header set is modelled or refused in bounded time and memory
// (TestHostileHeaders checks generated attacks against 10 s of CPU and
// 1 GB): includes nest at most 200 deep, as in gcc, and 20,000 file
// entries in all; the headers may total 16 MB (larger sets are refused
// before they are read); brackets nest at most 256 deep; the headers may
// have 600,000 tokens and 40,000 #defines in all, a line 300,000 tokens
// and a macro 10,000 (counted while the text is scanned, before cc/v4
// reads it, so that a line over its limit is never kept whole); the model's own macro expansion, and its
// estimate of what macros used in declarations cost cc/v4, have budgets;
// cc/v4 runs under Config.ExpansionLimit and evaluates macros only after
// the model's expansion of every one fits.
//
// # Macro values
//
// cc/v4 computes macro values with wrapping 64-bit arithmetic. The model
// evaluates every integer macro again with C's rules for LP64 (integer
// promotions, usual arithmetic conversions, unsigned wrap-around) and
// refuses, with a *MacroError, what C gives no value: a shift count below
// zero or not below the width (1<<64), signed overflow, division by zero,
// and any value or type that differs from cc's.
//
// # Errors
//
// A missing include root, header or include file is a *MissingError naming
// the path and the Debian package that provides it; a header the C front end
// rejects is a *ParseError whose messages read file:line:col: message, with
// paths relative to their include directory. A declaration the model cannot
// lay out exactly is a *LayoutError, a macro it refuses an *ExpansionError
// or *MacroError, and a header set beyond the bounds an *IncludeError with
// the position and the include chain.
package cheader
