/* Included by corner.h under #pragma pack(2): lays out its own record
 * under that value, then sets #pragma pack(1) for the includer. */
#ifndef CORNER_PACK_H
#define CORNER_PACK_H
struct c_pack_in_include { char a; int b; long c; };
#pragma pack(1)
#endif
