# per kernel instance and class on TARGET: pinned choice (orig) vs unpinned recommender's choice
TG=/work/main/build/generator/tools/tilegen; T=${T:-sm_90a}
while read spec inst; do
  a=$($TG dump --stage=recommend --target=$T --instance=$inst orig/$spec.yaml 2>&1 | grep -E "^class|^chosen" | sed 's/ (.*)//')
  b=$($TG dump --stage=recommend --target=$T --instance=$inst u/$spec.yaml 2>&1 | grep -E "^class|^chosen" | sed 's/ (.*)//')
  paste -d'|' <(echo "$a" | paste - - ) <(echo "$b" | paste - - | cut -f2) | while IFS='|' read x y; do
    p=$(echo "$x" | cut -f2); same=$([ "$p" == "$y" ] && echo SAME || echo DIFF)
    echo "$spec $inst $(echo "$x" | cut -f1 | cut -c1-40) | pinned ${p#chosen: } | rec ${y#chosen: } | $same"
  done
done <<'L'
gemm bf16
gemm f16
gemm f32
gemm_bias_gelu bf16
gemm_fp8 e4m3
flash_attention_fwd bf16_causal0_D128
flash_attention_fwd bf16_causal1_D128
flash_attention_fwd f16_causal0_D128
flash_attention_fwd bf16_causal0_D64
softmax bf16
softmax f32
rmsnorm bf16
rmsnorm f32
gemm_w4a16 bf16_ZP1
gemm_mxfp4 bf16
decode_attention bf16_PAGE16_D128
decode_attention bf16_PAGE64_D128
mla_decode bf16
grouped_gemm bf16
L
