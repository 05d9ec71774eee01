import { describe } from "vitest";
import { badInputSuite } from "./bad-input.suite.js";
import { cancelSuite } from "./cancel.suite.js";
import { capabilitiesAndToolsSuite } from "./capabilities-and-tools.suite.js";
import { inputRequiredSuite } from "./input-required.suite.js";
import { lifecycleSuite } from "./lifecycle.suite.js";
import { listSuite } from "./list.suite.js";
import { metaSuite } from "./meta.suite.js";
import { STREAMING, type ConformancePath, type PathName } from "./paths.js";
import { progressAndNotificationsSuite } from "./progress-and-notifications.suite.js";
import { resultSuite } from "./result.suite.js";
import { ttlSuite } from "./ttl.suite.js";

/** Every area of the 2025-11-25 Tasks conformance suite, each in its own describe, over `path`. */
export function conformanceSuites(path: ConformancePath): void {
  const areas: [string, (path: ConformancePath) => void, (readonly PathName[])?][] = [
    ["bad input", badInputSuite],
    ["cancel", cancelSuite],
    ["capabilities and tools", capabilitiesAndToolsSuite],
    ["input required", inputRequiredSuite],
    ["lifecycle", lifecycleSuite],
    ["list", listSuite],
    ["meta", metaSuite],
    // Streaming paths only: every test of this area needs progress or status notifications.
    ["progress and notifications", progressAndNotificationsSuite, STREAMING],
    ["result", resultSuite],
    ["ttl", ttlSuite],
  ];
  for (const [area, suite, paths] of areas) {
    if (paths === undefined || paths.includes(path.name)) describe(area, () => suite(path));
  }
}
