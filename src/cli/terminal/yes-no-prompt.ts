import type * as Inquirer from "@inquirer/prompts";
import { prompts } from "./prompts.js";

/** Where a prompt renders and what withdraws it (inquirer's context). */
type Context = NonNullable<Parameters<typeof Inquirer.input>[1]>;

/** The typed answer: true or false; null for nothing typed; undefined for something that is neither. */
function yesOrNo(text: string): boolean | null | undefined {
  const word = text.trim().toLowerCase();
  if (word === "") return null;
  if (word === "y" || word === "yes") return true;
  if (word === "n" || word === "no") return false;
  return undefined;
}

/**
 * A yes/no question with no answer chosen in advance (a boolean field whose schema gives no
 * `default`): shown `(y/n)`, and only a typed y or n answers it. Enter alone asks again when the
 * field is required, and leaves an optional field unanswered (undefined).
 */
export async function askYesNo(message: string, required: boolean, context: Context): Promise<boolean | undefined> {
  const typed = await prompts().input(
    {
      message: `${message} (y/n)`,
      validate: (text: string) => {
        const answer = yesOrNo(text);
        if (answer === undefined) return "answer y or n";
        if (answer === null && required) return "an answer is required: y or n";
        return true;
      },
      transformer: (text: string, { isFinal }: { isFinal: boolean }) => {
        if (!isFinal) return text;
        const answer = yesOrNo(text);
        return answer === true ? "Yes" : answer === false ? "No" : "(no answer)";
      },
    },
    context,
  );
  return yesOrNo(typed) ?? undefined;
}
