#!/bin/sh
# Time and chance are read through the types that provide them (issue 34): `HeraldClock` (HeraldCore) and the test
# kit's `MockClock`, and, in the modules below HeraldCore, the one injection point each has (its default is the
# machine's). Everything else takes a clock. Fails on a direct `Date()`, `Task.sleep` or random draw elsewhere in
# Sources. Random values drawn with an explicit generator (`using:`) are identifiers and secrets, not chance.
set -eu
cd "$(dirname "$0")/.."
allowed='^Sources/(HeraldCore/HeraldClock\.swift|HeraldTestSupport/MockClock\.swift|APNSCore/ProviderTokenCache\+Shared\.swift|APNSSimulator/APNSSimulatorConfiguration\.swift|FCMSimulator/FCMSimulatorConfiguration\.swift|WebPushSimulator/WebPushSimulatorConfiguration\.swift|RabbitMQ/Connection/ReconnectPolicy\.swift):'
found=$(grep -rnE 'Date\(\)|Task\.sleep|\b[A-Z][A-Za-z0-9]*\.random\(|randomElement\(|shuffled\(' Sources --include='*.swift' \
    | grep -vE '^[^:]+:[0-9]+: *///' | grep -vE "$allowed" | grep -v 'using: &' || true)
if [ -n "$found" ]; then
    echo "time or chance read directly (take a HeraldClock instead):"
    echo "$found"
    exit 1
fi
echo "clock: ok"
