/** Placeholder until the page lands. */
export default function Page() {
  return <p>incidents</p>;
}
