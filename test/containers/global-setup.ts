// The container lane's images, built once before its test files run (vitest.containers.config.ts).
import { buildImages } from "./lab.js";

export default async function setup(): Promise<void> {
  await buildImages();
}
