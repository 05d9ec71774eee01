import { memoryStore } from "../../src/store/memory/memory-store.js";
import { storeContract } from "../../src/testing/store-contract.js";

storeContract("memoryStore", () => memoryStore());
