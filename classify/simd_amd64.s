#include "textflag.h"

// The SIMD kernels of the JSON byte toolkit: plainRun for the scanner,
// quoteRun for AppendQuoted.

// func plainRun(p []byte) (n int, escaped bool)
//
// The length of p's leading run of string bytes that need no more thought:
// everything but a quote, a backslash, a byte below 0x20, DEL or a byte of
// 0x80 and above, and the two-byte escapes \" \\ \/ \n \t. It reads sixteen
// bytes at a time (SSE2, which every amd64 CPU has) and so stops at the
// last whole block of sixteen: p[n] is the byte that ends the run, or
// fewer than sixteen bytes are left. escaped is set when the run held an
// escape.
TEXT ·plainRun(SB), NOSPLIT, $0-33
	MOVQ p_base+0(FP), SI
	MOVQ p_len+8(FP), CX
	XORQ AX, AX
	XORQ DI, DI
	MOVQ $0x2222222222222222, DX
	MOVQ DX, X1
	PUNPCKLQDQ X1, X1
	MOVQ $0x5c5c5c5c5c5c5c5c, DX
	MOVQ DX, X2
	PUNPCKLQDQ X2, X2
	MOVQ $0x7f7f7f7f7f7f7f7f, DX
	MOVQ DX, X3
	PUNPCKLQDQ X3, X3
	MOVQ $0x2020202020202020, DX
	MOVQ DX, X4
	PUNPCKLQDQ X4, X4

loop:
	LEAQ 16(AX), DX
	CMPQ DX, CX
	JA   done
	MOVOU (SI)(AX*1), X0
	MOVOU X0, X5
	PCMPEQB X1, X5
	MOVOU X0, X6
	PCMPEQB X2, X6
	POR  X6, X5
	MOVOU X0, X6
	PCMPEQB X3, X6
	POR  X6, X5
	MOVOU X4, X6
	PCMPGTB X0, X6 // 0x20 > byte, signed: below 0x20, or 0x80 and above
	POR  X6, X5
	PMOVMSKB X5, DX
	TESTL DX, DX
	JNZ  found
	ADDQ $16, AX
	JMP  loop

found:
	BSFL DX, DX
	ADDQ DX, AX
	CMPB (SI)(AX*1), $0x5c
	JNE  done
	LEAQ 1(AX), DX
	CMPQ DX, CX
	JAE  done
	MOVBQZX 1(SI)(AX*1), BX
	CMPQ BX, $64
	JAE  high
	MOVQ $(1<<0x22 | 1<<0x2f), DX // " and /
	BTQ  BX, DX
	JCC  done
	JMP  skip

high:
	CMPQ BX, $128
	JAE  done
	SUBQ $64, BX
	MOVQ $(1<<(0x5c-64) | 1<<(0x6e-64) | 1<<(0x74-64)), DX // \ n t
	BTQ  BX, DX
	JCC  done

skip:
	MOVQ $1, DI
	ADDQ $2, AX
	JMP  loop

done:
	MOVQ AX, n+24(FP)
	MOVB DI, escaped+32(FP)
	RET

// func quoteRun(dst, src []byte) (nd, ns int)
//
// Quotes src into dst sixteen bytes at a time (SSE2, which every amd64 CPU
// has) while the bytes are printable ASCII or DEL, putting a backslash
// before each quote and backslash. A block is stored whole, and for each
// quote or backslash in it a backslash is stored there and the rest of
// the block again one byte further on. It stops before a block with a
// control character or a byte of 0x80 and above, before a block that
// would read past src[len(src)-16] (the re-stores read up to fifteen
// bytes past a block), and when dst has less than 48 bytes of room. It
// returns how many bytes it wrote and read.
TEXT ·quoteRun(SB), NOSPLIT, $0-64
	MOVQ dst_base+0(FP), DI
	MOVQ dst_len+8(FP), R8
	MOVQ src_base+24(FP), SI
	MOVQ src_len+32(FP), CX
	XORQ AX, AX // nd
	XORQ BX, BX // ns
	MOVQ $0x2222222222222222, DX
	MOVQ DX, X1
	PUNPCKLQDQ X1, X1
	MOVQ $0x5c5c5c5c5c5c5c5c, DX
	MOVQ DX, X2
	PUNPCKLQDQ X2, X2
	MOVQ $0x2020202020202020, DX
	MOVQ DX, X4
	PUNPCKLQDQ X4, X4

loop:
	LEAQ 32(BX), DX
	CMPQ DX, CX
	JA   done
	LEAQ 48(AX), DX
	CMPQ DX, R8
	JA   done
	MOVOU (SI)(BX*1), X0
	MOVOU X4, X6
	PCMPGTB X0, X6 // 0x20 > byte, signed: below 0x20, or 0x80 and above
	PMOVMSKB X6, DX
	TESTL DX, DX
	JNZ  done
	MOVOU X0, X5
	PCMPEQB X1, X5
	MOVOU X0, X6
	PCMPEQB X2, X6
	POR  X6, X5
	PMOVMSKB X5, DX
	MOVOU X0, (DI)(AX*1)
	LEAQ (SI)(BX*1), R9  // the block in src
	LEAQ (DI)(AX*1), R10 // the block in dst, moved on by each backslash
	TESTL DX, DX
	JZ   next

hit:
	BSFL DX, R11
	BTRL R11, DX
	MOVB $0x5c, (R10)(R11*1)
	MOVOU (R9)(R11*1), X3
	MOVOU X3, 1(R10)(R11*1)
	INCQ R10
	INCQ AX
	TESTL DX, DX
	JNZ  hit

next:
	ADDQ $16, AX
	ADDQ $16, BX
	JMP  loop

done:
	MOVQ AX, nd+48(FP)
	MOVQ BX, ns+56(FP)
	RET
