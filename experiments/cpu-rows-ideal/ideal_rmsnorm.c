#include <immintrin.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
static int PF=0;
static double cpu_s(void){struct timespec ts;clock_gettime(CLOCK_PROCESS_CPUTIME_ID,&ts);return ts.tv_sec+1e-9*ts.tv_nsec;}
static inline __m512 ld_bf16(const uint16_t* p){return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(_mm256_loadu_si256((const __m256i*)p)),16));}
static inline __m512 ld_f16(const uint16_t* p){return _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i*)p));}
/* RNE f32->bf16 without avx512bf16 */
static inline __m256i st_bf16(__m512 v){__m512i u=_mm512_castps_si512(v);
  __m512i r=_mm512_add_epi32(u,_mm512_add_epi32(_mm512_set1_epi32(0x7fff),_mm512_and_si512(_mm512_srli_epi32(u,16),_mm512_set1_epi32(1))));
  return _mm512_cvtepi32_epi16(_mm512_srli_epi32(r,16));}
static void rms_bf16(const uint16_t* X,const uint16_t* W,uint16_t* Y,int64_t M,int64_t N,int nt){
  float w[4096] __attribute__((aligned(64)));
  for(int64_t j=0;j<N;j+=16)_mm512_store_ps(w+j,ld_bf16(W+j));
  for(int64_t i=0;i<M;++i){const uint16_t* x=X+i*N;uint16_t* y=Y+i*N;
    __m512 a0=_mm512_setzero_ps(),a1=a0,a2=a0,a3=a0;
    for(int64_t j=0;j<N;j+=64){__m512 v0=ld_bf16(x+j),v1=ld_bf16(x+j+16),v2=ld_bf16(x+j+32),v3=ld_bf16(x+j+48);
      a0=_mm512_fmadd_ps(v0,v0,a0);a1=_mm512_fmadd_ps(v1,v1,a1);a2=_mm512_fmadd_ps(v2,v2,a2);a3=_mm512_fmadd_ps(v3,v3,a3);}
    float ss=_mm512_reduce_add_ps(_mm512_add_ps(_mm512_add_ps(a0,a1),_mm512_add_ps(a2,a3)));
    __m512 r=_mm512_set1_ps(1.0f/sqrtf(ss/N+1e-5f));
    for(int64_t j=0;j<N;j+=32){if(PF&&i+PF<M)_mm_prefetch((const char*)(x+PF*N+j),_MM_HINT_T0);__m256i lo=st_bf16(_mm512_mul_ps(_mm512_mul_ps(ld_bf16(x+j),r),_mm512_load_ps(w+j)));
      __m256i hi=st_bf16(_mm512_mul_ps(_mm512_mul_ps(ld_bf16(x+j+16),r),_mm512_load_ps(w+j+16)));
      __m512i h=_mm512_inserti64x4(_mm512_castsi256_si512(lo),hi,1);
      if(nt)_mm512_stream_si512((__m512i*)(y+j),h);else _mm512_storeu_si512(y+j,h);}
  }
  _mm_sfence();
}
static void rms_f16(const uint16_t* X,const uint16_t* W,uint16_t* Y,int64_t M,int64_t N,int nt){
  float w[4096] __attribute__((aligned(64)));
  for(int64_t j=0;j<N;j+=16)_mm512_store_ps(w+j,ld_f16(W+j));
  for(int64_t i=0;i<M;++i){const uint16_t* x=X+i*N;uint16_t* y=Y+i*N;
    __m512 a0=_mm512_setzero_ps(),a1=a0,a2=a0,a3=a0;
    for(int64_t j=0;j<N;j+=64){__m512 v0=ld_f16(x+j),v1=ld_f16(x+j+16),v2=ld_f16(x+j+32),v3=ld_f16(x+j+48);
      a0=_mm512_fmadd_ps(v0,v0,a0);a1=_mm512_fmadd_ps(v1,v1,a1);a2=_mm512_fmadd_ps(v2,v2,a2);a3=_mm512_fmadd_ps(v3,v3,a3);}
    float ss=_mm512_reduce_add_ps(_mm512_add_ps(_mm512_add_ps(a0,a1),_mm512_add_ps(a2,a3)));
    __m512 r=_mm512_set1_ps(1.0f/sqrtf(ss/N+1e-5f));
    for(int64_t j=0;j<N;j+=32){if(PF&&i+PF<M)_mm_prefetch((const char*)(x+PF*N+j),_MM_HINT_T0);__m256i lo=_mm512_cvtps_ph(_mm512_mul_ps(_mm512_mul_ps(ld_f16(x+j),r),_mm512_load_ps(w+j)),0);
      __m256i hi=_mm512_cvtps_ph(_mm512_mul_ps(_mm512_mul_ps(ld_f16(x+j+16),r),_mm512_load_ps(w+j+16)),0);
      __m512i h=_mm512_inserti64x4(_mm512_castsi256_si512(lo),hi,1);
      if(nt)_mm512_stream_si512((__m512i*)(y+j),h);else _mm512_storeu_si512(y+j,h);}
  }
  _mm_sfence();
}
int main(int argc,char**argv){PF=argc>1?atoi(argv[1]):0;int64_t N=4096;int rounds=9;
 for(int s=0;s<2;++s){int64_t M=s?16384:4096;size_t bytes=M*N*2;
  uint16_t*x=aligned_alloc(64,bytes),*y=aligned_alloc(64,bytes),*w=aligned_alloc(64,N*2);
  for(size_t i=0;i<M*N;++i)x[i]=0x3f80+(i*7919%97);for(int j=0;j<N;++j)w[j]=0x3f80;
  for(int k=0;k<2;++k){double b[5]={1e9,1e9,1e9,1e9,1e9};
   for(int r=0;r<rounds;++r)for(int v=0;v<5;++v){double t0=cpu_s();
     if(v==0)memcpy(y,x,bytes);else if(v==1)(k?rms_f16:rms_bf16)(x,w,y,M,N,0);else if(v==2)(k?rms_f16:rms_bf16)(x,w,y,M,N,1);
     else if(v==3){/* read-only pass */ volatile float z=0;__m512 a=_mm512_setzero_ps();for(size_t i=0;i<M*N;i+=32)a=_mm512_add_ps(a,_mm512_castsi512_ps(_mm512_load_si512(x+i)));z=_mm512_reduce_add_ps(a);}
     else {for(size_t i=0;i<M*N;i+=32)_mm512_stream_si512((__m512i*)(y+i),_mm512_load_si512(x+i));_mm_sfence();}
     double dt=cpu_s()-t0;if(dt<b[v])b[v]=dt;}
   printf("%s %lldx%lld: memcpy %.1f GB/s; ideal rms cached-store %.2fx, nt-store %.2fx of memcpy; read-only %.1f GB/s; nt-copy %.2fx\n",k?"f16":"bf16",(long long)M,(long long)N,2.0*bytes/b[0]*1e-9,b[0]/b[1],b[0]/b[2],bytes/b[3]*1e-9,b[0]/b[4]);}
  free(x);free(y);free(w);}
}
