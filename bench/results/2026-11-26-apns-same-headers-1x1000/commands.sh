#!/bin/bash
# Run as: commands.sh <this directory> 5 1 1000 m1 (and, for the 4x250 directory, 5 4 250 m1).
# usage: ab-same.sh OUTDIR ROUNDS C S LABEL — per round: h2load (issue's command), h2load with Herald's headers, herald
OUT=$(realpath -m $1); R=$2; C=$3; S=$4; L=$5; N=300000
mkdir -p $OUT; cd /work/main
T=0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef
JWT=$(python3 -c "import base64,json,os; b=lambda d: base64.urlsafe_b64encode(d).rstrip(b'=').decode(); print(b(json.dumps({'alg':'ES256','kid':'BENCHKEY01'}).encode())+'.'+b(json.dumps({'iss':'BENCHTEAM1','iat':1764140000}).encode())+'.'+b(os.urandom(64)))")
for i in $(seq 1 $R); do
  /usr/bin/time -f '%U %S' -o $OUT/h2load-${C}x${S}-$i.txt.time h2load -n $N -c $C -m $S -t 1 -d /work/benchruns/apns/body-250.json -H 'apns-topic: x' https://127.0.0.1:58443/3/device/$T > $OUT/h2load-${C}x${S}-$i.txt 2>&1
  /usr/bin/time -f '%U %S' -o $OUT/h2same-${C}x${S}-$i.txt.time h2load -n $N -c $C -m $S -t 1 -d /work/benchruns/apns/body-250.json -H 'apns-topic: com.example.bench' -H "authorization: bearer $JWT" -H 'apns-push-type: alert' -H 'apns-priority: 10' -H 'apns-expiration: 0' https://127.0.0.1:58443/3/device/$T > $OUT/h2same-${C}x${S}-$i.txt 2>&1
  /work/benchruns/bin/herald-$L bench apns --connections $C --streams $S --count $N --json > $OUT/herald-$L-${C}x${S}-$i.json 2>/dev/null
  python3 - $OUT $C $S $i $L <<'PY'
import json,re,sys
o,c,s,i,l=sys.argv[1:]
def h(p):
    r=float(re.search(r"finished in [^,]*, ([0-9.]+) req/s",open(p).read()).group(1)); u,st=map(float,open(p+'.time').read().split()[-2:]); return r,(u+st)*1e6/300000
a,ac=h(f"{o}/h2load-{c}x{s}-{i}.txt"); b,bc=h(f"{o}/h2same-{c}x{s}-{i}.txt")
d=json.load(open(f"{o}/herald-{l}-{c}x{s}-{i}.json")); x=d['sends_per_second']; xc=d['cpu_seconds']*1e6/300000
print(f"{c}x{s} r{i}: h2load {a:.0f} ({ac:.2f}us) h2load-same-headers {b:.0f} ({bc:.2f}us) herald {x:.0f} ({xc:.2f}us) ratio {x/a:.3f} ratio-same {x/b:.3f}")
PY
done
