/** Placeholder until the page lands. */
export default function Page() {
  return <p>alert-channels</p>;
}
