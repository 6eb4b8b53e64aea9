#include "textflag.h"

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
