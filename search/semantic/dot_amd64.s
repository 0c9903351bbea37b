#include "textflag.h"

// func dotsAVX2(q *int16, m *int8, stride int, rows int, out *int32)
//
// For each of rows rows of stride int8 values at m (stride a multiple of
// 32), out[r] = sum q[i]*row[i], with q widened to int16 beforehand.
TEXT ·dotsAVX2(SB), NOSPLIT, $0-40
	MOVQ q+0(FP), SI
	MOVQ m+8(FP), DI
	MOVQ stride+16(FP), CX
	MOVQ rows+24(FP), DX
	MOVQ out+32(FP), R8
rowloop:
	TESTQ DX, DX
	JZ done
	VPXOR Y0, Y0, Y0
	VPXOR Y1, Y1, Y1
	XORQ AX, AX
	MOVQ SI, R9
inner:
	VPMOVSXBW (DI)(AX*1), Y2
	VPMOVSXBW 16(DI)(AX*1), Y3
	VPMADDWD (R9), Y2, Y2
	VPMADDWD 32(R9), Y3, Y3
	VPADDD Y2, Y0, Y0
	VPADDD Y3, Y1, Y1
	ADDQ $32, AX
	ADDQ $64, R9
	CMPQ AX, CX
	JL inner
	VPADDD Y1, Y0, Y0
	VEXTRACTI128 $1, Y0, X1
	VPADDD X1, X0, X0
	VPSHUFD $0x4E, X0, X1
	VPADDD X1, X0, X0
	VPSHUFD $0xB1, X0, X1
	VPADDD X1, X0, X0
	VMOVD X0, R10
	MOVL R10, (R8)
	ADDQ CX, DI
	ADDQ $4, R8
	DECQ DX
	JMP rowloop
done:
	VZEROUPPER
	RET
